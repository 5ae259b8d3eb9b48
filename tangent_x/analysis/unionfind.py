"""Classes of names that one analysis treats alike (union-find with path
halving): lists sharing storage for the in-place pass, names of equal shape
for the peephole pass."""


class UnionFind:
    def __init__(self):
        self.parent = {}

    def find(self, a):
        """The representative of ``a``'s class (``a`` itself when alone)."""
        self.parent.setdefault(a, a)
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)
