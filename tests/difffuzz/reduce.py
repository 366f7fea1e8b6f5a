"""reduce.py: shrinks a failing generated kernel while it keeps failing the same way. It
removes a statement together with every later statement that reads what it defines, chunks
of statements (halves, quarters, ... single lines), a loop or branch as a whole, or only its
header and closing brace (the body stays, unwrapped), and finally unused parameters.
Candidates that no longer compile are rejected by the caller's predicate."""

import re

LET = re.compile(r"^\s*let\s+([\w\s,]+?)\s*=")


def body_span(lines):
    """Indices of the kernel body's first line and of its closing brace."""
    k = next(i for i, l in enumerate(lines) if l.startswith("kernel "))
    start = next(i for i in range(k, len(lines)) if lines[i].rstrip().endswith("{")) + 1
    end = max(i for i, l in enumerate(lines) if l.rstrip() == "}")
    return start, end


def matching_close(lines, i, end):
    depth = 0
    for j in range(i, end):
        depth += lines[j].count("{") - lines[j].count("}")
        if depth == 0:
            return j
    return None


def uses(line, names):
    return any(re.search(r"\b%s\b" % re.escape(n), line) for n in names)


def with_dependents(lines, i, end):
    """Line i and every later line that reads a name it defines (transitively)."""
    m = LET.match(lines[i])
    drop, names = [i], [n.strip() for n in m.group(1).split(",")] if m else []
    for j in range(i + 1, end):
        if names and uses(lines[j], names):
            drop.append(j)
            m = LET.match(lines[j])
            names += [n.strip() for n in m.group(1).split(",")] if m else []
    return drop


def candidates(lines, start, end, size):
    """Lists of line indices to remove: chunks of `size` lines, blocks, block wrappers."""
    idx = list(range(start, end))
    if size == 1:
        for i in reversed(idx):
            yield with_dependents(lines, i, end)
    for i in range(0, len(idx), size):
        yield idx[i:i + size]
    if size == 1:
        for i in idx:
            if lines[i].rstrip().endswith("{"):
                j = matching_close(lines, i, end)
                if j is not None:
                    yield list(range(i, j + 1))
                    yield [i, j]


def drop_params(text, fails):
    """Removes kernel parameters the body no longer names."""
    m = re.search(r"kernel \w+\((.*?)\) \{", text, re.S)
    if not m:
        return text
    body = text[m.end():]
    params = [p.strip() for p in m.group(1).split(",")]
    keep = [p for p in params if p.startswith("const") or
            re.search(r"\b%s\b" % re.escape(p.split(":")[0].strip()), body)]
    if len(keep) == len(params):
        return text
    trial = text[:m.start(1)] + ", ".join(keep) + text[m.end(1):]
    return trial if fails(trial) else text


def minimize(text, fails, log=lambda msg: None):
    """The smallest text found (by line removal) for which fails(text) stays true."""
    lines = text.split("\n")
    size = 16
    while size >= 1:
        changed = False
        start, end = body_span(lines)
        for drop in candidates(lines, start, end, size):
            if any(d >= len(lines) for d in drop):
                continue
            gone = set(drop)
            trial = [l for i, l in enumerate(lines) if i not in gone]
            if fails("\n".join(trial)):
                lines, changed = trial, True
                log("reduced to %d lines" % len(lines))
                break
        if not changed:
            size //= 2
    return drop_params("\n".join(lines), fails)
