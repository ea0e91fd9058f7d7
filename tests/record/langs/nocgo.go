//go:build !cgo

package main

func extra() uint64 { return 0 }
