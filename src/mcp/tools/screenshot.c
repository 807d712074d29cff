/* SPDX-License-Identifier: Apache-2.0 */
/*
 * screenshot: the app's frame as PNG image content.  Asked of the app
 * (its screenshot provider), or `adb exec-out screencap -p` on a device.
 * Refused, never faked: a secure frame, no provider, or a frame that is
 * all black (a blank capture is not a picture of the app).
 */
#include "ph_common.h"
#include "mcp/mcp.h"

static int screenshot_call(struct ph_mcp_call *c)
{
	const struct ph_json *r, *data;
	struct ph_buf png = PH_BUF_INIT((size_t)32 << 20);
	char err[160];
	int64_t w = 0, h = 0, at = 0;
	int black;

	if (ph_mcp_app(c, "screenshot", NULL, &r))
		return 0;
	data = ph_json_get(r, "data");
	if (!ph_json_is(data, PH_JSON_STRING) || !data->n)
		return ph_mcp_fail(c, "the app's screenshot has no image data");
	if (ph_base64_decode(data->u.s, data->n, &png)) {
		ph_buf_release(&png);
		return ph_mcp_fail(c, "the app's screenshot is not base64");
	}
	black = ph_png_all_black((const unsigned char *)png.buf, png.len, err,
				 sizeof(err));
	ph_buf_release(&png);
	ph_json_as_int(ph_json_get(r, "width"), &w);
	ph_json_as_int(ph_json_get(r, "height"), &h);
	ph_json_as_int(ph_json_get(r, "capturedAt"), &at);
	if (black == 1)
		return ph_mcp_fail(
			c,
			"refused: the captured frame (%" PRId64 "x%" PRId64
			" at t=%" PRId64
			") is all black; that is not a picture of the "
			"app (a secure or not-yet-drawn surface?)",
			w, h, at);
	if (black < 0)
		return ph_mcp_fail(c,
				   "refused: the app's screenshot cannot "
				   "be read as PNG (%s)",
				   err);
	c->image = data->u.s;
	c->image_len = data->n;
	c->image_mime = "image/png";
	ph_mcp_line(c,
		    "screenshot %" PRId64 "x%" PRId64 " at t=%" PRId64
		    " (PNG, %u base64 bytes)",
		    w, h, at, data->n);
	ph_jw_kv_int(&c->jw, "width", w);
	ph_jw_kv_int(&c->jw, "height", h);
	ph_jw_kv_int(&c->jw, "capturedAt", at);
	return 0;
}

const struct ph_mcp_tool ph_mcp_tool_screenshot = {
	.name = "screenshot",
	.title = "Screenshot",
	.description = "The app's current frame as a PNG image. Refused, "
		       "never faked, when the app marks the frame secure, "
		       "has no screenshot provider, or the frame is all "
		       "black.",
	.flags = PH_TOOL_READONLY,
	.call = screenshot_call,
};
