"""body.py: the statements of a kernel being generated and the values in scope: each new value
is bound to a `let`, scopes follow loops and branches, and use counts tell which values no
statement reads yet (the generator stores those, so that little of the program is dead)."""

from dataclasses import replace


class Body:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []
        self.scopes = [[]]
        self.uses = {}
        self.count = 0

    def emit(self, text):
        self.lines.append("    " * len(self.scopes) + text)

    def bind(self, v, name=None):
        """`let NAME = v;` and the value as that variable."""
        name = name or "v%d" % self.count
        self.count += 1
        self.emit("let %s = %s;" % (name, v.expr))
        out = replace(v, expr=name)
        self.scopes[-1].append(out)
        self.uses[name] = 0
        return out

    def bind_split(self, expr, a, b):
        """`let A, B = expr;` for two values of a's and b's types (split)."""
        names = ["v%d" % self.count, "v%d" % (self.count + 1)]
        self.count += 2
        self.emit("let %s, %s = %s;" % (names[0], names[1], expr))
        outs = [replace(a, expr=names[0]), replace(b, expr=names[1])]
        for v in outs:
            self.scopes[-1].append(v)
            self.uses[v.expr] = 0
        return outs

    def declare(self, v):
        """A variable bound by statements already emitted (an accumulator after its loop)."""
        self.scopes[-1].append(v)
        self.uses.setdefault(v.expr, 0)

    def redeclare(self, v):
        """What is known of variable v.expr after assignments to it (branches)."""
        for scope in self.scopes:
            for i, u in enumerate(scope):
                if u.expr == v.expr:
                    scope[i] = v

    def push(self, header):
        self.emit(header + " {")
        self.scopes.append([])

    def pop(self):
        self.scopes.pop()
        self.emit("}")

    def values(self, pred=None):
        vals = [v for s in self.scopes for v in s]
        return [v for v in vals if pred is None or pred(v)]

    def pick(self, pred=None, recent=0.6):
        """A value in scope satisfying pred, the later ones likelier (chains get deep)."""
        vals = self.values(pred)
        if not vals:
            return None
        if self.rng.random() < recent:
            vals = vals[-max(1, len(vals) // 3):]
        v = self.rng.choice(vals)
        self.use(v)
        return v

    def use(self, v):
        if v.expr in self.uses:
            self.uses[v.expr] += 1

    def unused(self):
        return [v for v in self.values() if self.uses.get(v.expr) == 0]

    def text(self):
        return "\n".join(self.lines)
