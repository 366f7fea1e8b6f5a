/* callgraph.c: strongly connected components of the helper call graph (Tarjan's algorithm,
 * iterative so a chain of 100,000 helpers needs no deep C stack), then one pass over the
 * edges marks those inside a component. Time and memory are linear in functions + calls. */
#include "callgraph.h"

typedef struct {
    int *first, *adj;        /* edges of v: adj[first[v] .. first[v + 1]) (callee positions) */
    int *index, *low, *comp; /* Tarjan's visit order, low link, component (-1: none yet) */
    int *stack, nstack;      /* visited vertices not yet in a component */
    int *path, *next;        /* the DFS path, and the next edge to try at each vertex */
    unsigned char *on_stack;
    int counter, ncomp;
} Tarjan;

static int tarjan_alloc(Arena *a, Tarjan *t, int n, int nedges) {
    size_t vn = (size_t)n + 1;
    t->first = arena_alloc(a, sizeof(int) * (vn + 1));
    t->adj = arena_alloc(a, sizeof(int) * ((size_t)nedges + 1));
    t->index = arena_alloc(a, sizeof(int) * vn);
    t->low = arena_alloc(a, sizeof(int) * vn);
    t->comp = arena_alloc(a, sizeof(int) * vn);
    t->stack = arena_alloc(a, sizeof(int) * vn);
    t->path = arena_alloc(a, sizeof(int) * vn);
    t->next = arena_alloc(a, sizeof(int) * vn);
    t->on_stack = arena_alloc(a, vn);
    return t->first && t->adj && t->index && t->low && t->comp && t->stack && t->path &&
                   t->next && t->on_stack ? 0 : -1;
}

/* Adjacency lists in one array, by counting sort of the edges on their caller (next[] counts,
 * zeroed by the arena). */
static void build_adjacency(Tarjan *t, int n, const CallEdge *edges, int nedges) {
    for (int i = 0; i < nedges; i++) t->first[edges[i].caller + 1]++;
    for (int v = 0; v < n; v++) t->first[v + 1] += t->first[v];
    for (int i = 0; i < nedges; i++) {
        int v = edges[i].caller;
        t->adj[t->first[v] + t->next[v]++] = edges[i].callee;
    }
}

static void visit(Tarjan *t, int v) {
    t->index[v] = t->low[v] = ++t->counter;
    t->next[v] = t->first[v];
    t->stack[t->nstack++] = v;
    t->on_stack[v] = 1;
}

/* v's edges are all explored: close its component if it is the root of one. */
static void finish(Tarjan *t, int v) {
    if (t->low[v] != t->index[v]) return;
    int w;
    do {
        w = t->stack[--t->nstack];
        t->on_stack[w] = 0;
        t->comp[w] = t->ncomp;
    } while (w != v);
    t->ncomp++;
}

static void search_from(Tarjan *t, int root) {
    int depth = 0;
    t->path[depth++] = root;
    visit(t, root);
    while (depth > 0) {
        int v = t->path[depth - 1];
        if (t->next[v] < t->first[v + 1]) {
            int w = t->adj[t->next[v]++];
            if (!t->index[w]) {
                visit(t, w);
                t->path[depth++] = w;
            } else if (t->on_stack[w] && t->index[w] < t->low[v]) {
                t->low[v] = t->index[w];
            }
            continue;
        }
        finish(t, v);
        if (--depth > 0 && t->low[v] < t->low[t->path[depth - 1]])
            t->low[t->path[depth - 1]] = t->low[v];
    }
}

int callgraph_cyclic(Arena *a, int nfuncs, const CallEdge *edges, int nedges,
                     unsigned char *cyclic) {
    Tarjan t = {0};
    if (tarjan_alloc(a, &t, nfuncs, nedges)) return -1;
    build_adjacency(&t, nfuncs, edges, nedges);
    for (int v = 0; v < nfuncs; v++)
        if (!t.index[v]) search_from(&t, v);
    for (int i = 0; i < nedges; i++)
        cyclic[i] = t.comp[edges[i].caller] == t.comp[edges[i].callee];
    return 0;
}

int callgraph_taint(Arena *a, int n, const CallEdge *edges, int nedges, unsigned char *bad) {
    int *first = arena_alloc(a, sizeof(int) * ((size_t)n + 2));
    int *callers = arena_alloc(a, sizeof(int) * ((size_t)nedges + 1));
    int *fill = arena_alloc(a, sizeof(int) * ((size_t)n + 1));
    int *queue = arena_alloc(a, sizeof(int) * ((size_t)n + 1));
    if (!first || !callers || !fill || !queue) return -1;
    for (int i = 0; i < nedges; i++) first[edges[i].callee + 1]++; /* counting sort on callee */
    for (int v = 0; v < n; v++) first[v + 1] += first[v];
    for (int i = 0; i < nedges; i++) {
        int v = edges[i].callee;
        callers[first[v] + fill[v]++] = edges[i].caller;
    }
    int head = 0, tail = 0;
    for (int v = 0; v < n; v++)
        if (bad[v]) queue[tail++] = v;
    while (head < tail) {
        int v = queue[head++];
        for (int j = first[v]; j < first[v + 1]; j++)
            if (!bad[callers[j]]) bad[callers[j]] = 1, queue[tail++] = callers[j];
    }
    return 0;
}
