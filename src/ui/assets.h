/* SPDX-License-Identifier: Apache-2.0 */
/*
 * assets.h: the page's files, embedded in the binary at build time
 * (scripts/embed.sh writes build/gen/ui_assets.c from src/ui/assets/), so
 * `porthole ui` serves them with no files, no CDN and no network.
 */
#ifndef PH_UI_ASSETS_H
#define PH_UI_ASSETS_H

#include <stddef.h>

struct ph_ui_asset {
	const char *path;	   /* "/index.html"; NULL ends the table */
	const char *type;	   /* the Content-Type to send */
	const unsigned char *data; /* NUL-terminated, for convenience */
	size_t size;		   /* bytes, without that NUL */
};

/* Every asset, ended by a row whose path is NULL. */
extern const struct ph_ui_asset ph_ui_assets[];

#endif
