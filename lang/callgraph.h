/* callgraph.h: which helper calls close a call cycle (helpers are inlined, so a cycle could
 * never end), and which functions reach one with an error, found in time linear in the number
 * of functions and calls. */
#ifndef TILE_CALLGRAPH_H
#define TILE_CALLGRAPH_H
#include "arena.h"

typedef struct {
    int caller, callee; /* positions in the module's function list */
    const void *site;   /* the call expression, for the diagnostic */
} CallEdge;

/* Sets cyclic[i] for each edge whose callee reaches its caller (the two lie in one strongly
 * connected component; a call of a function by itself included). 0, or -1 out of memory. */
int callgraph_cyclic(Arena *a, int nfuncs, const CallEdge *edges, int nedges,
                     unsigned char *cyclic);

/* Sets bad[v] for every function that calls one already marked bad, directly or through
 * others (a breadth-first walk of the calls backwards: linear time). 0, or -1 out of memory. */
int callgraph_taint(Arena *a, int nfuncs, const CallEdge *edges, int nedges, unsigned char *bad);

#endif
