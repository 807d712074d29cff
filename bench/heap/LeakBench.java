// bench/heap/LeakBench.java: the program bench_heap dumps.  It builds
// millions of linked objects (a long list of nodes, each with a small
// payload array, plus a tree over them) and plants one leak: a destroyed
// activity kept by a static listener list.  Then it prints "ready" and
// waits, so the bench can take the dump with `jcmd <pid> GC.heap_dump`.
import java.util.ArrayList;
import java.util.List;

public class LeakBench {
    static final class Node {
        Node next;
        Node left;
        long value;
        int[] payload;
    }

    static final class MainActivity extends android.app.Activity {
        Object[] views = new Object[64];
    }

    static final class Listener {
        final MainActivity owner;
        Listener(MainActivity owner) { this.owner = owner; }
    }

    static Node head;
    static final List<Listener> LISTENERS = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 1_400_000;
        Node prev = null;
        Node[] all = new Node[n];
        for (int i = 0; i < n; i++) {
            Node x = new Node();
            x.value = i;
            x.payload = new int[4 + (i & 7)];
            x.next = prev;
            if (i > 0)
                x.left = all[(i * 7) % i];
            all[i] = x;
            prev = x;
        }
        head = prev;
        all = null;
        MainActivity a = new MainActivity();
        for (int i = 0; i < a.views.length; i++)
            a.views[i] = new byte[256];
        a.mDestroyed = true;
        LISTENERS.add(new Listener(a));
        System.out.println("ready");
        System.out.flush();
        System.in.read();
    }
}
