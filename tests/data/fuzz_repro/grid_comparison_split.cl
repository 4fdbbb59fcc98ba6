// A comparison in a two-dimensional launch rule: the comma splitter (kernel.cpp SplitTopLevel)
// counts < and > as brackets, so the rule is read as one dimension and rejected.
// @kernel f
// @grid (B < 2 ? 1 : 2), 1
// @block 1, 1
__kernel void f() {}
