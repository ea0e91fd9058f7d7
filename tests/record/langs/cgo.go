//go:build cgo

package main

/*
__attribute__((noinline)) static unsigned long hot_c(unsigned long n)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < n; i++)
		x = x * 31 + i;
	return x;
}
*/
import "C"

func extra() uint64 { return uint64(C.hot_c(50000)) }
