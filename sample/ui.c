/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ui.c: the sample's screen.  A cart: a header, a list of item rows, a
 * total, a "Check out" button, a share icon button with no label (planted:
 * accessibility) and a 16 px close button (planted: a touch target under
 * 24 dp).  Components report their renders to Porthole; the screen is
 * drawn into an RGBA pixel buffer that the screenshot provider hands out.
 *
 * The planted re-render bug: while "animate totals" is on, the total is
 * written every frame and every item row reads it, so every row renders
 * every frame; with "scoped reads" the read moves into one leaf and only
 * that leaf renders.
 */
#include "sample.h"
#include "porthole.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define ROWS 4

static uint8_t pixels[SAMPLE_W * SAMPLE_H * 4];
static pthread_mutex_t px_mu = PTHREAD_MUTEX_INITIALIZER;

struct box {
	int x, y, w, h;
};

static const struct box header = { 0, 0, SAMPLE_W, 56 };
static const struct box rows[ROWS] = {
	{ 12, 72, 336, 64 },
	{ 12, 144, 336, 64 },
	{ 12, 216, 336, 64 },
	{ 12, 288, 336, 64 },
};
static const struct box total_box = { 12, 372, 336, 48 };
static const struct box checkout = { 20, 560, 320, 56 };
static const struct box share_icon = { 300, 10, 36, 36 };
static const struct box close_btn = { 10, 20, 16, 16 };
static const char *const row_names[ROWS] = { "MUG X2", "POSTER", "TOTE",
					     "STICKERS" };

/* A 3x5 pixel font: five rows of three bits, for the characters used. */
static const char glyph_chars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ$.-";
static const uint8_t glyphs[][5] = {
	{ 7, 5, 5, 5, 7 }, { 2, 6, 2, 2, 7 }, { 7, 1, 7, 4, 7 },
	{ 7, 1, 7, 1, 7 }, { 5, 5, 7, 1, 1 }, { 7, 4, 7, 1, 7 },
	{ 7, 4, 7, 5, 7 }, { 7, 1, 1, 1, 1 }, { 7, 5, 7, 5, 7 },
	{ 7, 5, 7, 1, 7 }, { 2, 5, 7, 5, 5 }, { 6, 5, 6, 5, 6 },
	{ 7, 4, 4, 4, 7 }, { 6, 5, 5, 5, 6 }, { 7, 4, 6, 4, 7 },
	{ 7, 4, 6, 4, 4 }, { 7, 4, 5, 5, 7 }, { 5, 5, 7, 5, 5 },
	{ 7, 2, 2, 2, 7 }, { 1, 1, 1, 5, 7 }, { 5, 5, 6, 5, 5 },
	{ 4, 4, 4, 4, 7 }, { 5, 7, 7, 5, 5 }, { 6, 5, 5, 5, 5 },
	{ 7, 5, 5, 5, 7 }, { 7, 5, 7, 4, 4 }, { 7, 5, 5, 7, 1 },
	{ 6, 5, 6, 5, 5 }, { 7, 4, 7, 1, 7 }, { 7, 2, 2, 2, 2 },
	{ 5, 5, 5, 5, 7 }, { 5, 5, 5, 5, 2 }, { 5, 5, 7, 7, 5 },
	{ 5, 5, 2, 5, 5 }, { 5, 5, 7, 2, 2 }, { 7, 1, 2, 4, 7 },
	{ 2, 7, 6, 3, 7 }, { 0, 0, 0, 0, 2 }, { 0, 0, 7, 0, 0 },
};

static void fill(const struct box *b, uint32_t rgb)
{
	for (int y = b->y; y < b->y + b->h && y < SAMPLE_H; y++) {
		for (int x = b->x; x < b->x + b->w && x < SAMPLE_W; x++) {
			uint8_t *p = pixels + (y * SAMPLE_W + x) * 4;

			p[0] = (uint8_t)(rgb >> 16);
			p[1] = (uint8_t)(rgb >> 8);
			p[2] = (uint8_t)rgb;
			p[3] = 255;
		}
	}
}

static void text(int x, int y, int scale, const char *s, uint32_t rgb)
{
	for (; *s; s++, x += 4 * scale) {
		const char *g = strchr(glyph_chars, *s);

		if (!g || !*s)
			continue;
		for (int r = 0; r < 5; r++)
			for (int c = 0; c < 3; c++)
				if (glyphs[g - glyph_chars][r] >> (2 - c) & 1) {
					struct box px = { x + c * scale,
							  y + r * scale, scale,
							  scale };

					fill(&px, rgb);
				}
	}
}

static bool inside(const struct box *b, float x, float y)
{
	return x >= b->x && x < b->x + b->w && y >= b->y && y < b->y + b->h;
}

/* The semantics tree, from the same boxes the screen is drawn with. */
static void node(struct porthole_sem *t, const struct box *b, const char *role,
		 const char *txt, const char *label, const char *tag,
		 bool clickable)
{
	struct porthole_sem_node n = {
		.role = role,
		.text = txt,
		.label = label,
		.test_tag = tag,
		.left = (float)b->x,
		.top = (float)b->y,
		.right = (float)(b->x + b->w),
		.bottom = (float)(b->y + b->h),
		.clickable = clickable,
	};

	porthole_sem_begin(t, &n);
}

static void semantics(struct porthole_sem *t, void *ctx)
{
	static const struct box root = { 0, 0, SAMPLE_W, SAMPLE_H };

	(void)ctx;
	node(t, &root, NULL, NULL, NULL, NULL, false);
	node(t, &header, "Header", "CART", NULL, "header", false);
	node(t, &close_btn, "Button", NULL, "Close", "close", true);
	porthole_sem_end(t);
	/* planted: an icon button with no text and no label */
	node(t, &share_icon, "Button", NULL, NULL, "share", true);
	porthole_sem_end(t);
	porthole_sem_end(t);
	for (int i = 0; i < ROWS; i++) {
		node(t, &rows[i], "ListItem", row_names[i], NULL, NULL, false);
		porthole_sem_end(t);
	}
	node(t, &total_box, "Text", "TOTAL", NULL, "total", false);
	porthole_sem_end(t);
	node(t, &checkout, "Button", "Check out", NULL, "checkout", true);
	porthole_sem_end(t);
	porthole_sem_end(t);
}

static int screenshot(const uint8_t **px, int *w, int *h, bool *secure,
		      void *ctx)
{
	static uint8_t copy[sizeof(pixels)];

	(void)ctx;
	pthread_mutex_lock(&px_mu);
	memcpy(copy, pixels, sizeof(copy));
	pthread_mutex_unlock(&px_mu);
	*px = copy;
	*w = SAMPLE_W;
	*h = SAMPLE_H;
	*secure = false;
	return 0;
}

void ui_init(void)
{
	porthole_set_semantics_provider(semantics, NULL);
	porthole_set_screenshot_provider(screenshot, NULL);
}

/* Component renders for this frame (the recomposition lane). */
void ui_frame(void)
{
	static const char *const ids[ROWS] = { "Cart.ItemRow#1",
					       "Cart.ItemRow#2",
					       "Cart.ItemRow#3",
					       "Cart.ItemRow#4" };

	if (!sample.animate_totals)
		return;
	sample.cart_total_cents += 1;
	porthole_state_write("Cart.total");
	if (sample.scoped_reads) {
		porthole_recompose("Cart.TotalLeaf#1", "Cart.TotalLeaf", "Cart",
				   NULL, 0);
		return;
	}
	for (int i = 0; i < ROWS; i++)
		porthole_recompose(ids[i], "Cart.ItemRow", "Cart", NULL, 0);
}

static void busy_ms(int ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000 +
		       (b.tv_nsec - a.tv_nsec) / 1000000 <
	       ms);
}

/* The planted expensive layout: text measured again, every frame. */
__attribute__((noinline)) void measure_text_layout_slowly(void)
{
	busy_ms(45);
}

void ui_layout(void)
{
	if (sample.expensive_layout)
		measure_text_layout_slowly();
}

void ui_draw(void)
{
	char total[32];

	pthread_mutex_lock(&px_mu);
	memset(pixels, 0xf4, sizeof(pixels));
	fill(&header, 0x1e3a5f);
	text(140, 18, 4, "CART", 0xffffff);
	fill(&share_icon, 0x4a6fa5);
	fill(&close_btn, 0x9fb3c8);
	for (int i = 0; i < ROWS; i++) {
		fill(&rows[i], 0xffffff);
		text(rows[i].x + 12, rows[i].y + 22, 4, row_names[i], 0x222222);
	}
	snprintf(total, sizeof(total), "TOTAL $%d.%02d",
		 sample.cart_total_cents / 100, sample.cart_total_cents % 100);
	fill(&total_box, 0xe8eef5);
	text(total_box.x + 12, total_box.y + 14, 4, total, 0x1e3a5f);
	fill(&checkout, sample.screen == 2 ? 0x2e7d32 : 0x1565c0);
	text(checkout.x + 90, checkout.y + 18, 4, "CHECK OUT", 0xffffff);
	pthread_mutex_unlock(&px_mu);
}

void ui_tap(float x, float y)
{
	/*
	 * The planted slow tap: with the expensive layout on, the tap lays
	 * the whole cart out again, three times, before anything is drawn.
	 */
	if (sample.expensive_layout)
		for (int i = 0; i < 3; i++)
			measure_text_layout_slowly();
	if (inside(&checkout, x, y) && sample.screen == 1) {
		sample.screen = 2;
		porthole_nav(PORTHOLE_NAV_PUSH, "cart/checkout", "Checkout",
			     "cartId=99001", NULL, 3);
		net_request("checkout");
	}
}
