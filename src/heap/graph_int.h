/* SPDX-License-Identifier: Apache-2.0 */
/*
 * graph_int.h: what the object graph's parts share, and no one else uses:
 * graph.c (building it), graph_paths.c (paths, reachability) and
 * dominators.c.
 */
#ifndef PH_HEAP_GRAPH_INT_H
#define PH_HEAP_GRAPH_INT_H

#include "ph_common.h"
#include "heap.h"

/* Bit 31 of an edge (h->edst) marks a known library-leak reference. */
#define EDGE_LIB  (1u << 31)
#define EDGE_MASK (~EDGE_LIB)

/* Whether a root record makes its object a GC root. */
bool ph_heap_root_counts(const struct ph_heap *h, const struct ph_heap_root *r);

#endif
