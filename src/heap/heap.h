/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heap.h: the heap engine.  HPROF dumps in, leak traces and retained sizes
 * out.  docs/heap.md is the user's side of this file.
 *
 * Invariants, once for the whole engine:
 *
 *  - A struct ph_heap owns one dump, memory-mapped read-only.  Nothing is
 *    copied out of it that can be read in place: names, field values and
 *    array elements are decoded from the mapping when asked for.  Every
 *    pointer the engine hands out lives until ph_heap_release().
 *  - Objects are numbered 0..nobj-1 in increasing id order ("object
 *    index").  Class objects, instances, object arrays and primitive
 *    arrays share that numbering.  PH_HEAP_NONE is "no object".
 *  - The index keeps 12 bytes per object (16 when the dump's ids span more
 *    than 2^32 aligned slots): a 32-bit key for the id and a 64-bit word
 *    with the record's file offset, its kind and its heap.  Everything
 *    else (edges, parents, dominators) is analysis state, built on demand
 *    by the ph_heap_* steps below and dropped with the heap.
 *  - Hostile input is normal input.  A dump that ends early or carries a
 *    malformed record is read up to that record: ph_heap_open() still
 *    succeeds, `partial` is set and `err` names the byte offset and why.
 *    Only a file that is not HPROF at all fails to open.
 *  - Steps run in order and each runs at most once: open, graph, then
 *    any of paths / reachability / dominators, which need the graph.
 *    ph_heap_* calls are not thread-safe on one heap.
 */
#ifndef PH_HEAP_H
#define PH_HEAP_H

#include "ph_common.h"
#include "ph_arena.h"
#include "ph_buf.h"
#include "ph_error.h"

#define PH_HEAP_NONE	  UINT32_MAX
#define PH_HEAP_MAX_HEAPS 16

enum ph_heap_kind {
	PH_HEAP_CLASS = 0, /* a CLASS_DUMP: the class object itself */
	PH_HEAP_INSTANCE = 1,
	PH_HEAP_OBJ_ARRAY = 2,
	PH_HEAP_PRIM_ARRAY = 3, /* including Android's PRIMITIVE_ARRAY_NODATA */
};

/* HPROF basic types, as the format numbers them. */
enum ph_heap_type {
	PH_HT_OBJECT = 2,
	PH_HT_BOOLEAN = 4,
	PH_HT_CHAR = 5,
	PH_HT_FLOAT = 6,
	PH_HT_DOUBLE = 7,
	PH_HT_BYTE = 8,
	PH_HT_SHORT = 9,
	PH_HT_INT = 10,
	PH_HT_LONG = 11,
};

/* GC root kinds: the heap sub-record tags that name them. */
enum ph_heap_root_kind {
	PH_ROOT_UNKNOWN = 0xff,
	PH_ROOT_JNI_GLOBAL = 0x01,
	PH_ROOT_JNI_LOCAL = 0x02,
	PH_ROOT_JAVA_FRAME = 0x03,
	PH_ROOT_NATIVE_STACK = 0x04,
	PH_ROOT_STICKY_CLASS = 0x05,
	PH_ROOT_THREAD_BLOCK = 0x06,
	PH_ROOT_MONITOR_USED = 0x07,
	PH_ROOT_THREAD_OBJECT = 0x08,
	PH_ROOT_INTERNED_STRING = 0x89,
	PH_ROOT_FINALIZING = 0x8a,
	PH_ROOT_DEBUGGER = 0x8b,
	PH_ROOT_REFERENCE_CLEANUP = 0x8c,
	PH_ROOT_VM_INTERNAL = 0x8d,
	PH_ROOT_JNI_MONITOR = 0x8e,
	PH_ROOT_UNREACHABLE = 0x90,
};

/* How strongly a java.lang.ref.Reference holds its referent. */
enum ph_heap_strength {
	PH_REACH_STRONG = 0,
	PH_REACH_SOFT,
	PH_REACH_FINALIZER,
	PH_REACH_WEAK,
	PH_REACH_PHANTOM,
	PH_REACH_UNREACHABLE,
};

struct ph_heap_root {
	uint64_t id;	 /* as written; may name no object */
	uint32_t obj;	 /* object index, or PH_HEAP_NONE */
	uint8_t kind;	 /* enum ph_heap_root_kind */
	uint32_t thread; /* thread serial for thread-local kinds, or 0 */
};

/* One field, flattened: a class's own fields, then its superclass's. */
struct ph_heap_field {
	uint64_t name_sid; /* string id of the field's name */
	uint32_t offset;   /* within the instance's field bytes */
	uint16_t decl;	   /* depth of the declaring class: 0 is the class */
	uint8_t type;	   /* enum ph_heap_type */
};

struct ph_heap_class {
	uint64_t id;
	uint64_t super_id;
	uint64_t loader_id;
	const char *name;	/* Java form: "java.lang.String", "byte[]";
				   de-obfuscated when a map is set */
	const char *raw_name;	/* as the dump names it, Java form */
	uint32_t obj;		/* object index of the class object */
	uint32_t super;		/* class index of the superclass, or NONE */
	uint64_t rec;		/* offset of the CLASS_DUMP sub-record */
	uint32_t instance_size; /* as the class dump says */
	uint32_t nstatics;
	uint64_t statics_off; /* first static field entry */
	uint32_t nown;	      /* instance fields declared here */
	uint64_t own_off;     /* first instance field descriptor */
	uint32_t fields;      /* first flattened field in ph_heap.fields */
	uint32_t nfields;     /* flattened count, supers included */
	uint32_t fields_size; /* bytes of field data an instance carries */
	uint32_t refs;	      /* first reference offset in ph_heap.refoffs */
	uint32_t nrefs;
	uint32_t referent_off; /* offset of Reference.referent, or NONE */
	uint8_t strength;      /* for Reference subclasses; else STRONG */
	uint8_t prim_type;     /* element type for "int[]" etc., or 0 */
	bool is_string;	       /* java.lang.String */
	bool synthetic;	       /* made up for a primitive array type */
	uint64_t count;	       /* instances (objects whose class this is) */
	uint64_t shallow;      /* their shallow bytes */
	uint64_t retained;     /* sum of their retained bytes (dominators) */
};

struct ph_heap_info {
	uint32_t hid;	  /* the id in HEAP_DUMP_INFO, e.g. 'A' */
	const char *name; /* "app", "zygote", "image", "default" */
	uint64_t classes; /* class dumps in this heap */
	uint64_t objects; /* instances and arrays in this heap */
	uint64_t shallow;
};

/* A java.lang.ref referent edge, kept apart from the strong graph. */
struct ph_heap_wref {
	uint32_t ref;	   /* the Reference object */
	uint32_t referent; /* what it points at */
	uint8_t strength;  /* enum ph_heap_strength */
};

struct ph_heap_map; /* an R8/ProGuard mapping; see ph_heap_map_* */

struct ph_heap {
	const uint8_t *data; /* the mapping */
	size_t size;
	bool mapped;	  /* data came from mmap (else caller's memory) */
	char version[20]; /* "JAVA PROFILE 1.0.3" */
	uint32_t idsz;	  /* 4 or 8 */
	uint64_t timestamp_ms;
	bool partial;	   /* the dump was read only up to err.offset */
	struct ph_err err; /* why partial */
	bool android;	   /* Android sub-records or heap names were seen */

	uint64_t rec_count[256]; /* top-level records by tag */
	uint64_t sub_count[256]; /* heap dump sub-records by tag */
	uint64_t segments;	 /* HEAP_DUMP + HEAP_DUMP_SEGMENT records */

	/* STRING records, sorted by id: id and offset of the UTF-8 bytes. */
	uint64_t *str_ids;
	uint64_t *str_offs; /* offset << 24 | min(length, 2^24 - 1) */
	size_t nstrs;
	/* LOAD_CLASS: class object id -> name string id, sorted. */
	uint64_t *lc_ids;
	uint64_t *lc_names;
	size_t nlc;

	struct ph_heap_info heaps[PH_HEAP_MAX_HEAPS];
	uint32_t nheaps;

	struct ph_heap_class *classes; /* sorted by id; synthetic ones last */
	uint32_t nclasses;
	uint32_t nclasses_real; /* ones with a class dump */
	uint32_t unknown_cls;	/* synthetic: objects whose class
				   the dump never defined */
	struct ph_heap_field *fields;
	uint32_t nfields;
	uint32_t *refoffs;
	uint32_t nrefoffs;

	/* The index: see the top of this file. */
	uint32_t nobj;
	uint32_t *keys;	    /* (id - min_id) >> shift, when !wide */
	uint64_t *wide_ids; /* the ids themselves, when wide */
	uint64_t *meta;	    /* offset | kind << 40 | heap << 42 */
	uint64_t min_id;
	unsigned shift;
	bool wide;

	struct ph_heap_root *roots;
	size_t nroots;
	/* ROOT_THREAD_OBJECT: thread serial -> object index, sorted. */
	uint32_t *thread_serials;
	uint32_t *thread_objs;
	size_t nthreads;

	/* ph_heap_graph(): per object, and the strong edges as CSR. */
	uint32_t *cls;	   /* class index of each object; a class object's
			      is its own entry */
	uint32_t *shallow; /* ART rules; see docs/heap.md */
	uint32_t *eoff;	   /* nobj + 1 */
	uint32_t *edst;	   /* bit 31: a known library-leak reference */
	uint64_t nedges;
	struct ph_heap_wref *wrefs;
	size_t nwrefs;
	uint32_t *native_obj; /* registered native sizes, sorted by object */
	uint64_t *native_size;
	size_t nnative;

	/* ph_heap_dominators() */
	uint32_t *idom; /* object index, or NONE for the root set */
	uint64_t *retained;
	uint32_t *retained_count;
	uint64_t reachable; /* strongly reachable objects */

	/*
	 * Knobs that reproduce perflib's model, to explain where its figures
	 * differ from ours (tests/unit/test_heap.c, docs/heap.md).  Set them
	 * after open, before ph_heap_graph().
	 */
	bool perflib_sizes;	      /* a String is not charged its chars */
	bool perflib_no_thread_roots; /* ROOT_THREAD_OBJECT is not a root */
	bool perflib_referents;	      /* Reference.referent is a strong edge */

	struct ph_heap_map *map; /* borrowed; may be NULL */
	struct ph_arena arena;	 /* names, tables */
};

/* ------------------------------------------------------------------ */
/* hprof.c: reading and indexing                                       */

/*
 * Arrays of one entry per object (tens of megabytes each) come straight
 * from mmap, zeroed: freeing one gives its memory back at once.  Through
 * malloc, freeing a block that big raises glibc's mmap threshold to its
 * size, the next ones come from the brk heap, and freeing those returns
 * nothing, so peak RSS creeps up by every array a step frees.  They ask
 * for transparent huge pages too: faulting tens of megabytes 4 KiB at a
 * time costs more than filling them.  (Under AddressSanitizer they are
 * plain calloc/realloc/free, so its redzones still guard them.)  Every
 * array in struct ph_heap that holds one entry per object is one of these.
 */
void *ph_heap_big_alloc(size_t bytes);
void *ph_heap_big_realloc(void *p, size_t bytes);
void ph_heap_big_free(void *p);

void ph_heap_init(struct ph_heap *h);
/*
 * Maps path and indexes it.  0 on success (check h->partial), PH_ENOENT,
 * PH_EIO, PH_ENOMEM, or PH_ECORRUPT when it is not an HPROF file at all
 * (h->err says where).
 */
int ph_heap_open(struct ph_heap *h, const char *path) PH_WUR;
/* The same over memory the caller keeps alive (tests, the fuzzer). */
int ph_heap_open_mem(struct ph_heap *h, const void *data, size_t size) PH_WUR;
void ph_heap_release(struct ph_heap *h);
/* Drops the mapping's pages from the resident set (see hprof.c). */
void ph_heap_drop_pages(struct ph_heap *h);
/* Uses map (borrowed, may be NULL) for class and field names from now on. */
void ph_heap_set_map(struct ph_heap *h, struct ph_heap_map *map);

/* Object index of id, or PH_HEAP_NONE. */
uint32_t ph_heap_find(const struct ph_heap *h, uint64_t id);
uint64_t ph_heap_id(const struct ph_heap *h, uint32_t obj);
static inline enum ph_heap_kind ph_heap_kind_of(const struct ph_heap *h,
						uint32_t obj)
{
	return (enum ph_heap_kind)((h->meta[obj] >> 40) & 3);
}
static inline uint32_t ph_heap_heap_of(const struct ph_heap *h, uint32_t obj)
{
	return (uint32_t)((h->meta[obj] >> 42) & 15);
}
static inline uint64_t ph_heap_rec(const struct ph_heap *h, uint32_t obj)
{
	return h->meta[obj] & ((1ull << 40) - 1);
}
/* Class index for a class object id, or PH_HEAP_NONE. */
uint32_t ph_heap_class_by_id(const struct ph_heap *h, uint64_t id);
/* First class with this (de-obfuscated) name, or PH_HEAP_NONE. */
uint32_t ph_heap_class_by_name(const struct ph_heap *h, const char *name);
/* True when class c is `ancestor` or extends it. */
bool ph_heap_class_is(const struct ph_heap *h, uint32_t c, uint32_t ancestor);
bool ph_heap_class_is_named(const struct ph_heap *h, uint32_t c,
			    const char *name);

/* The bytes of a STRING record (not NUL-terminated); NULL if unknown. */
const char *ph_heap_string(const struct ph_heap *h, uint64_t sid, size_t *n);
/* A field's name, de-obfuscated through the map, in the arena. */
const char *ph_heap_field_name(struct ph_heap *h, uint32_t cls,
			       const struct ph_heap_field *f);
size_t ph_heap_type_size(const struct ph_heap *h, unsigned type);
const char *ph_heap_root_name(unsigned kind); /* "STICKY_CLASS" */
const char *ph_heap_kind_name(enum ph_heap_kind kind);

/* A decoded value: refs have type OBJECT and the id in u. */
struct ph_heap_value {
	uint8_t type; /* 0 when absent */
	uint64_t u;   /* raw bits, zero-extended */
};
/*
 * The value of instance field `name` declared by class `decl` (or by any
 * class when decl is NULL) of object obj; type 0 when there is none.
 */
struct ph_heap_value ph_heap_get_field(struct ph_heap *h, uint32_t obj,
				       const char *decl, const char *name);
/* Static field `name` of class c. */
struct ph_heap_value ph_heap_get_static(struct ph_heap *h, uint32_t c,
					const char *name);
/* The id stored at a reference field's offset in an instance, or 0. */
uint64_t ph_heap_instance_ref(const struct ph_heap *h, uint32_t obj,
			      uint32_t offset);
/* Array length (0 for non-arrays). */
uint32_t ph_heap_array_length(const struct ph_heap *h, uint32_t obj);
/* Element i of an object array as an id; 0 past the end. */
uint64_t ph_heap_array_ref(const struct ph_heap *h, uint32_t obj, uint32_t i);
/*
 * A java.lang.String's text into out (UTF-8; Latin-1, UTF-16 and ART's
 * compressed forms); PH_ENOENT when obj is not a readable String.
 */
int ph_heap_read_string(struct ph_heap *h, uint32_t obj,
			struct ph_buf *out) PH_WUR;
/* Class name of any object, de-obfuscated ("java.lang.Class" never). */
const char *ph_heap_class_name(struct ph_heap *h, uint32_t cls);

/* ------------------------------------------------------------------ */
/* graph.c, graph_paths.c, dominators.c: edges, paths, reachability,  */
/* dominators                                                          */

/*
 * Builds cls, shallow, the strong edges and the referent list; finds
 * registered native sizes.  Must precede the steps below.
 */
int ph_heap_graph(struct ph_heap *h) PH_WUR;

/*
 * A shortest strong path search from every GC root at once
 * (breadth-first, library-leak references and thread-local roots last).
 * parent[obj] is the object one step closer to a root, PH_HEAP_NONE for a
 * root or an unreached object; `root_of` distinguishes them.
 */
struct ph_heap_paths {
	uint32_t *parent;
	uint8_t *state; /* 0 unreached, else 1 + flags below */
	uint64_t reached;
};
enum {
	PH_PATH_ROOT = 1 << 1,	  /* a GC root itself */
	PH_PATH_LOCAL = 1 << 2,	  /* reached from its thread as a local */
	PH_PATH_LIBRARY = 1 << 3, /* the path uses a library-leak reference */
};
/*
 * targets (may be NULL): stop as soon as all of them are reached, which
 * keeps `leaks` fast; NULL runs to completion.
 */
int ph_heap_paths(struct ph_heap *h, struct ph_heap_paths *p,
		  const uint32_t *targets, size_t ntargets) PH_WUR;
void ph_heap_paths_release(struct ph_heap_paths *p);

/*
 * Known library leaks: references that AOSP or a common library is known
 * to hold too long.  Paths through them are searched last, so the app's
 * own path wins, and a trace that still goes through one is reported as
 * a library leak with this description.
 */
struct ph_heap_libref {
	const char *cls; /* declaring class */
	const char *field;
	bool is_static;
	const char *desc;
};
extern const struct ph_heap_libref ph_heap_librefs[];
extern const size_t ph_heap_nlibrefs;

/* Per object: enum ph_heap_strength, ahat's reachability classes. */
int ph_heap_reachability(struct ph_heap *h, uint8_t **out) PH_WUR;

/*
 * Immediate dominators over strong edges (Lengauer-Tarjan), retained
 * sizes and counts for every object, and per class sums.
 */
int ph_heap_dominators(struct ph_heap *h) PH_WUR;
/* Bytes of heap `heap` that obj retains (perflib's per-heap view). */
uint64_t ph_heap_retained_in_heap(struct ph_heap *h, uint32_t obj,
				  uint32_t heap);
/* Registered native bytes attributed to obj (0 if none). */
uint64_t ph_heap_native_size(const struct ph_heap *h, uint32_t obj);

/* ------------------------------------------------------------------ */
/* leaks.c, leak_inspect.c, leak_render.c: leaking objects, statuses, */
/* traces                                                              */

enum ph_leak_status { PH_LEAK_UNKNOWN, PH_LEAK_NO, PH_LEAK_YES };

struct ph_leak_node {
	uint32_t obj;
	uint8_t status;	    /* enum ph_leak_status */
	const char *reason; /* arena */
	const char **labels;
	size_t nlabels;
	/* the reference from this node to the next (none on the last) */
	uint8_t ref_kind;	 /* 0 static, 1 instance, 2 array, 3 local */
	const char *ref_owner;	 /* simple name of the declaring class */
	const char *ref_name;	 /* "sInstance", "[3]", "<Java Local>" */
	const char *ref_generic; /* as ref_name, but "[x]" for arrays */
	bool suspect;
};

/*
 * A path longer than PH_LEAK_KEEP_ROOT + PH_LEAK_KEEP_LEAK nodes keeps
 * only the nodes nearest the GC root and nearest the leak (where the
 * causes and the leaking object are), so a list of millions of links
 * still renders in a few kilobytes.  Statuses, suspects and the signature
 * are computed over the whole path.
 */
#define PH_LEAK_KEEP_ROOT 128
#define PH_LEAK_KEEP_LEAK 128

struct ph_leak_trace {
	uint8_t root_kind;
	struct ph_leak_node *nodes; /* root side first; last is the leak */
	size_t nnodes;		    /* nodes kept */
	size_t length;		    /* nodes on the whole path */
	size_t elided_at; /* nodes[elided_at - 1]'s reference leads into the
			   * elided run; nodes[elided_at] follows it */
	size_t elided;	  /* nodes left out (0: the whole path is kept) */
	uint32_t first_suspect;	       /* its object, or PH_HEAP_NONE (may be
					* elided: LeakCanary's short form) */
	const char *first_suspect_ref; /* its reference's generic name */
	uint64_t retained;
	uint32_t retained_count;
	bool library; /* goes through a known library leak */
	const char *library_desc;
	char signature[41];   /* hex SHA-1 over the suspect references */
	uint32_t group_count; /* traces sharing the signature */
};

struct ph_leak_opts {
	const char *watch_class; /* --class: every instance is leaking */
	bool with_retained;	 /* compute dominators (default on) */
};

struct ph_leak_result {
	struct ph_leak_trace *traces; /* one per signature, biggest first */
	size_t ntraces;
	size_t nleaking; /* leaking objects found, before grouping */
	size_t napp, nlib;
	uint64_t unreachable_leaking; /* leaking objects with no strong path */
};

/* Finds leaking objects, their paths and statuses.  Arena-backed. */
int ph_heap_leaks(struct ph_heap *h, const struct ph_leak_opts *opts,
		  struct ph_leak_result *out) PH_WUR;
/* The shortest path to obj as a trace (for `heap path`); PH_ENOENT when
 * it is not strongly reachable. */
int ph_heap_path_trace(struct ph_heap *h, uint32_t obj,
		       struct ph_leak_trace *out) PH_WUR;
/*
 * The `leak` events of an analysis (docs/protocol.md §4.3), appended to
 * out: one NDJSON line per leak group, {"event":"leak","t":t,"seq":-1,
 * "data":{...}}, each '\n'-terminated, with the fields of `heap leaks
 * --json` and traceText cut at 6000 characters plus "...".  hprof names
 * the dump (may be NULL); t is app uptime in ms (0: unknown).
 */
int ph_heap_leak_events(struct ph_heap *h, const struct ph_leak_result *res,
			const char *hprof, int64_t t,
			struct ph_buf *out) PH_WUR;
/* LeakCanary's text rendering of one trace. */
int ph_leak_trace_render(struct ph_heap *h, const struct ph_leak_trace *t,
			 bool show_status, struct ph_buf *out) PH_WUR;
/* "46.3 kB", LeakCanary's SI formatting. */
void ph_heap_human_bytes(uint64_t bytes, char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* map.c: R8 / ProGuard mapping files                                  */

int ph_heap_map_load(struct ph_heap_map **out, const char *path) PH_WUR;
int ph_heap_map_parse(struct ph_heap_map **out, const char *text,
		      size_t len) PH_WUR;
void ph_heap_map_free(struct ph_heap_map *m);
/* Original class name for an obfuscated one, or NULL. */
const char *ph_heap_map_class(const struct ph_heap_map *m, const char *obf);
/* Original field name, given the obfuscated class and field; or NULL. */
const char *ph_heap_map_field(const struct ph_heap_map *m,
			      const char *obf_class, const char *obf_field);

/* sha1.c */
void ph_heap_sha1_hex(const void *data, size_t n, char out[41]);
/* The same over data given a piece at a time (a leak path of any length). */
struct ph_heap_sha1 {
	uint32_t h[5];
	uint64_t len;
	uint8_t block[64];
	size_t used;
};
void ph_heap_sha1_init(struct ph_heap_sha1 *s);
void ph_heap_sha1_update(struct ph_heap_sha1 *s, const void *data, size_t n);
void ph_heap_sha1_final_hex(struct ph_heap_sha1 *s, char out[41]);

/* ------------------------------------------------------------------ */
/* report.c: what the commands print                                   */

struct ph_heap_cmd_opts {
	const char *dump;
	const char *map;
	const char *watch_class;
	const char *by; /* top: retained|shallow|count */
	long limit;
	bool json;
	uint64_t object_id; /* path */
	/*
	 * leaks: when set, the `leak` events of the analysis are appended
	 * to events too, their t the app uptime that uptime_of (may be NULL:
	 * t 0, unknown) gives for the dump's wall-clock time.
	 */
	struct ph_buf *events;
	int64_t (*uptime_of)(void *ctx, uint64_t wall_ms);
	void *uptime_ctx;
};
/* Each returns the exit status of its command (0, 1 = leaks found or, for
 * stats, a partial dump, 2 = error; leaks: 3 = the dump was read only
 * partially, whatever was found). */
int ph_heap_cmd_leaks(const struct ph_heap_cmd_opts *o, FILE *out);
int ph_heap_cmd_top(const struct ph_heap_cmd_opts *o, FILE *out);
int ph_heap_cmd_path(const struct ph_heap_cmd_opts *o, FILE *out);
int ph_heap_cmd_stats(const struct ph_heap_cmd_opts *o, FILE *out);

#endif
