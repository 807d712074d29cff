// A stand-in for android.app.Activity, so a JVM dump carries the same
// class and field the leak inspectors read on a device.
package android.app;

public class Activity {
    public boolean mDestroyed;
}
