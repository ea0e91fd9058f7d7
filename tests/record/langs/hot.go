// Two hot functions with a known split of the work (70/30 loop iterations of the same body,
// whose mix step Go inlines), called from main: the Go workload of tests/record/test_go.sh.
// With the cgo build tag a third of the time also goes to C (hot_c) through cgo.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

func mix(x uint64, i int) uint64 {
	return x*31 + uint64(i)
}

//go:noinline
func hotGoAlpha(n int) uint64 {
	x := uint64(0)
	for i := 0; i < n; i++ {
		x = mix(x, i)
	}
	return x
}

//go:noinline
func hotGoBeta(n int) uint64 {
	x := uint64(0)
	for i := 0; i < n; i++ {
		x = mix(x, i)
	}
	return x
}

func main() {
	secs := 3.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		sink += hotGoAlpha(70000)
		sink += hotGoBeta(30000)
		sink += extra()
	}
	fmt.Println(sink)
}
