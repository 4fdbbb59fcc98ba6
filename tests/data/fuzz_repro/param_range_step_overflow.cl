// Reproduces signed overflow in ParseParam (kernel.cpp): v += step passes LLONG_MAX.
// @kernel f
// @grid 1
// @block 1
// @param A in range(9223372036854775806, 9223372036854775807, 5)
__kernel void f() {}
