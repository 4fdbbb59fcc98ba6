// Reproduces signed overflow in ParseParam (kernel.cpp): b - a overflows long long.
// @kernel f
// @grid 1
// @block 1
// @param A in range(-9223372036854775807, 9223372036854775807, 9223372036854775807)
__kernel void f() {}
