/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_wire.c: protocol v1's kind and key names as tables, and the lookups
 * between names and their small integers (ph_wire.h).
 */
#include "ph_common.h"
#include "ph_wire.h"

static const char *const kind_names[PH_KIND_COUNT] = {
	[PH_KIND_UNKNOWN] = "unknown",
#define X(id, name) [PH_KIND_##id] = name,
	PH_KINDS(X)
#undef X
};

static const char *const key_names[PH_KEY_END] = {
#define X(id, name) [PH_KEY_##id] = name,
	PH_KEYS(X)
#undef X
};

const char *ph_wire_kind_name(enum ph_kind kind)
{
	if ((unsigned)kind >= PH_KIND_COUNT)
		return "unknown";
	return kind_names[kind];
}

static const uint8_t kind_len[PH_KIND_COUNT] = {
#define X(id, name) [PH_KIND_##id] = sizeof(name) - 1,
	PH_KINDS(X)
#undef X
};

enum ph_kind ph_wire_kind(const char *name, size_t n)
{
	/* 27 short names: a linear scan beats a hash at this size.  The
	 * host classifies every event it reads with it: lengths first. */
	for (int k = 1; k < PH_KIND_COUNT; k++)
		if (kind_len[k] == n && name[0] == kind_names[k][0] &&
		    !memcmp(kind_names[k], name, n))
			return (enum ph_kind)k;
	return PH_KIND_UNKNOWN;
}

/* Each key as it appears in a line, quotes and colon included. */
#define PH_KEY_JSON(name) "\"" name "\":"
static const char *const key_json[PH_KEY_END] = {
#define X(id, name) [PH_KEY_##id] = PH_KEY_JSON(name),
	PH_KEYS(X)
#undef X
};

static const uint8_t key_json_len[PH_KEY_END] = {
#define X(id, name) [PH_KEY_##id] = sizeof(PH_KEY_JSON(name)) - 1,
	PH_KEYS(X)
#undef X
};

const char *ph_wire_key_json(enum ph_key key, size_t *len)
{
	if ((unsigned)key >= PH_KEY_END || !key_json[key]) {
		*len = 0;
		return "";
	}
	*len = key_json_len[key];
	return key_json[key];
}

const char *ph_wire_key_name(enum ph_key key)
{
	if ((unsigned)key >= PH_KEY_END)
		return "";
	return key_names[key];
}
