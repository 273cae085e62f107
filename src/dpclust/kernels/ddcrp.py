"""Numba kernels of the ddCRP's customer-assignment Gibbs sampler (Blei & Frazier 2010, 3.2).

``ddcrp_sweep`` is one compiled loop of about 130 lines on purpose: the per-customer steps
share the walk's scratch arrays in registers, and splitting them into calls costs speed.

The state is the link graph: customer i links to ``links[i]`` (itself or another customer),
and the tables are the connected components.  Every customer has one outgoing link, so a
table is a functional graph: one cycle (a self link in the sequential case) with trees
hanging into it.  Removing i's link splits i's table exactly when i is not on that cycle,
and the part that leaves is i's in-tree (the customers whose links lead to i).

Per customer the sweep

1. removes i's link and decides whether the table splits by walking forward from the old
   target (does the walk come back to i?) while searching i's in-tree breadth first over the
   reverse links (``child`` lists), one step of each in turn, so that the cost is the
   smaller of the two and never a connected-components pass over the data;
2. if it splits, moves the in-tree's customers into a new table slot (a single customer
   needs no slot: its predictive densities are enough);
3. weighs every candidate: ``log alpha`` for itself, ``log f(d_ij)`` for a customer at its
   own table, and ``log f(d_ij)`` plus the table's join gain ``log f(X_A ∪ X_T) - log f(X_A)
   - log f(X_T)`` otherwise, computed once per candidate table (Mathematics §4);
4. draws the link and, when it joins another table, moves the moving part there.

So a customer costs O(candidates + candidate tables) plus the size of the part that moves.
With the constant decay every (earlier) customer is a candidate: candidates are grouped by
table (weight = number of eligible customers there) and the link target is then drawn
uniformly within the chosen table.

Slots: ``sizes[t]`` customers; ``live[:n_live]`` are the occupied slots (``live_pos`` their
positions), ``free[:n_free]`` the others.  ``counters = [n_live, n_free, tag]``, where the
tag stamps the marks of one customer's step so that they never need clearing.
"""

from __future__ import annotations

import math

from numba import njit

from .gibbs import categorical_from_logs
from .streams import next_uniform

EXPLICIT, ALL_OTHERS, ALL_EARLIER = 0, 1, 2


@njit(cache=True, _nrt=False)
def _unlink(i, links, ch_head, ch_next, ch_prev):
    p = links[i]
    if p == i:
        return
    nx = ch_next[i]
    pv = ch_prev[i]
    if pv >= 0:
        ch_next[pv] = nx
    else:
        ch_head[p] = nx
    if nx >= 0:
        ch_prev[nx] = pv
    ch_next[i] = -1
    ch_prev[i] = -1


@njit(cache=True, _nrt=False)
def _link(i, j, links, ch_head, ch_next, ch_prev):
    links[i] = j
    if j != i:
        h = ch_head[j]
        ch_next[i] = h
        ch_prev[i] = -1
        if h >= 0:
            ch_prev[h] = i
        ch_head[j] = i


@njit(cache=True, _nrt=False)
def _split_part(i, old, links, ch_head, ch_next, queue, walk_mark, tag):
    """After removing the link ``i -> old``: 0 when i's table stays whole, else the number
    of customers of i's in-tree, which split off (listed in ``queue``, i first)."""
    if old == i:
        return 0
    queue[0] = i
    head = 0
    tail = 1
    w = old
    while True:
        # one step of the walk from old: back at i means i was on the cycle
        if w == i:
            return 0
        if walk_mark[w] == tag:
            break  # the walk went round a cycle without i: the table splits
        walk_mark[w] = tag
        w = links[w]
        # one step of the search of i's in-tree
        if head == tail:
            return tail  # the in-tree is complete and old is not in it
        x = queue[head]
        head += 1
        c = ch_head[x]
        while c >= 0:
            if c == old:
                return 0
            queue[tail] = c
            tail += 1
            c = ch_next[c]
    return _search_rest(head, tail, ch_head, ch_next, queue)


@njit(cache=True, _nrt=False)
def _search_rest(head, tail, ch_head, ch_next, queue):
    """Finish a breadth-first search over the reverse links from ``queue[head:tail]``;
    returns the number of customers found."""
    while head < tail:
        x = queue[head]
        head += 1
        c = ch_head[x]
        while c >= 0:
            queue[tail] = c
            tail += 1
            c = ch_next[c]
    return tail


@njit(cache=True, _nrt=False)
def _in_tree(i, ch_head, ch_next, queue):
    """Every customer whose links lead to i (i first); i's own link must be removed."""
    queue[0] = i
    return _search_rest(0, 1, ch_head, ch_next, queue)


@njit(cache=True, _nrt=False)
def _open_slot(live, live_pos, free, counters):
    n_free = counters[1] - 1
    s = free[n_free]
    counters[1] = n_free
    n_live = counters[0]
    live[n_live] = s
    live_pos[s] = n_live
    counters[0] = n_live + 1
    return s


@njit(cache=True, _nrt=False)
def _close_slot(s, live, live_pos, free, counters):
    n_live = counters[0] - 1
    p = live_pos[s]
    last = live[n_live]
    live[p] = last
    live_pos[last] = p
    counters[0] = n_live
    free[counters[1]] = s
    counters[1] += 1


@njit(cache=True, _nrt=False)
def _uniform_member(t, i, hi, table, count, state):
    """A customer j < hi, j != i, with ``table[j] == t``, uniformly among the ``count``
    such customers: rejection from uniform draws, then a scan if that keeps missing."""
    for _ in range(64):
        state, u = next_uniform(state)
        j = min(int(u * hi), hi - 1)
        if j != i and table[j] == t:
            return state, j
    state, u = next_uniform(state)
    r = min(int(u * count), count - 1)
    for j in range(hi):
        if j != i and table[j] == t:
            if r == 0:
                return state, j
            r -= 1
    return state, -1  # unreachable when count is right


@njit
def ddcrp_sweep(kdata, kstats, khyper, links, table, ch_head, ch_next, ch_prev, sizes, live,
                live_pos, free, counters, cnt_before, mode, indptr, indices, log_f,
                prior_pred, log_alpha, start, seed, queue, walk_mark, gain_stamp, gain_val,
                logw, target, reset, add, remove, log_predictive, log_join_gain):
    """One systematic sweep of the customer-assignment Gibbs sampler over customers
    ``start .. n - 1`` (see the module docstring).

    Long on purpose: one compiled sweep whose cut, score and relink steps share the
    tables' linked lists in registers (split, numba would pass 30 arrays per customer).

    ``mode``: 0 explicit candidate rows (``indptr``, ``indices``, ``log_f``); 1 every other
    customer with weight 1; 2 every earlier customer with weight 1 (``cnt_before[t]``
    counts the customers before the current one at table t; it must be zero at ``start =
    0``).  ``prior_pred[i] = log f(x_i)``.  Returns the customer reached: ``n`` when done,
    earlier when a new table slot is needed and none is free (the caller grows the slots
    and calls again from there).
    """
    n = links.shape[0]
    state = seed
    for i in range(start, n):
        if counters[1] == 0:
            return i
        tag = counters[2] + 1
        counters[2] = tag
        old = links[i]
        T = table[i]
        _unlink(i, links, ch_head, ch_next, ch_prev)
        n_part = _split_part(i, old, links, ch_head, ch_next, queue, walk_mark, tag)
        virtual = n_part == 1  # i alone splits off: no slot until it is needed
        if virtual:
            remove(kdata, i, kstats, T, khyper)
            sizes[T] -= 1
            table[i] = -1
            a = -1
            size_a = 1
        elif n_part > 1:
            a = _open_slot(live, live_pos, free, counters)
            reset(kstats, a, khyper)
            for q in range(n_part):
                m = queue[q]
                remove(kdata, m, kstats, T, khyper)
                add(kdata, m, kstats, a, khyper)
                table[m] = a
                if mode == ALL_EARLIER and m < i:
                    cnt_before[T] -= 1
                    cnt_before[a] += 1
            sizes[T] -= n_part
            sizes[a] = n_part
            size_a = n_part
        else:
            a = T
            size_a = sizes[T]
        single = size_a == 1

        # the candidates' log weights
        logw[0] = log_alpha
        target[0] = i
        m = 1
        if mode == EXPLICIT:
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                tj = table[j]
                w = log_f[p]
                if tj != a:
                    if gain_stamp[tj] != tag:
                        gain_stamp[tj] = tag
                        if single:
                            gain_val[tj] = (log_predictive(kdata, i, kstats, tj, khyper)
                                            - prior_pred[i])
                        else:
                            gain_val[tj] = log_join_gain(kstats, a, tj, khyper)
                    w += gain_val[tj]
                logw[m] = w
                target[m] = j
                m += 1
        else:
            for q in range(counters[0]):
                t = live[q]
                c = sizes[t] if mode == ALL_OTHERS else cnt_before[t]
                if t == a and mode == ALL_OTHERS:
                    c -= 1
                if c <= 0:
                    continue
                w = math.log(c)
                if t != a:
                    if single:
                        w += log_predictive(kdata, i, kstats, t, khyper) - prior_pred[i]
                    else:
                        w += log_join_gain(kstats, a, t, khyper)
                logw[m] = w
                target[m] = t
                m += 1
        state, u = next_uniform(state)
        pick = categorical_from_logs(logw, m, u)
        if pick == 0:
            j = i
        elif mode == EXPLICIT:
            j = target[pick]
        else:
            t = target[pick]
            count = sizes[t] if mode == ALL_OTHERS else cnt_before[t]
            if t == a and mode == ALL_OTHERS:
                count -= 1
            state, j = _uniform_member(t, i, n if mode == ALL_OTHERS else i, table, count,
                                       state)

        # apply the new link
        if j == i:
            if virtual:
                a = _open_slot(live, live_pos, free, counters)
                reset(kstats, a, khyper)
                add(kdata, i, kstats, a, khyper)
                sizes[a] = 1
                table[i] = a
        else:
            tj = table[j]
            if virtual:
                add(kdata, i, kstats, tj, khyper)
                sizes[tj] += 1
                table[i] = tj
            elif tj != a:
                n_move = n_part if n_part > 0 else _in_tree(i, ch_head, ch_next, queue)
                for q in range(n_move):
                    mm = queue[q]
                    add(kdata, mm, kstats, tj, khyper)
                    table[mm] = tj
                    if mode == ALL_EARLIER and mm < i:
                        cnt_before[a] -= 1
                        cnt_before[tj] += 1
                sizes[tj] += n_move
                sizes[a] = 0
                _close_slot(a, live, live_pos, free, counters)
        _link(i, j, links, ch_head, ch_next, ch_prev)
        if mode == ALL_EARLIER:
            cnt_before[table[i]] += 1
    return n
