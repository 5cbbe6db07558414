// Command goheap writes a small Go heap profile with known allocations, to
// test memtrace's pprof reader against the Go runtime's writer.  It needs
// only the standard library, so it builds offline:
//
//	GOFLAGS=-mod=mod GOPROXY=off go build -trimpath -o goheap main.go
//	./goheap heap.pb.gz
//	./goheap -debug1 heap.txt    (the text format of WriteTo(w, 1))
//
// The profile (runtime.MemProfileRate = 1, so every allocation is in it)
// has Go's four heap sample types: alloc_objects/count, alloc_space/bytes,
// inuse_objects/count and inuse_space/bytes.  Expected stacks:
//
//	allocSmall: 100 blocks of 64 bytes, all in use, through newBlock,
//	            which the compiler inlines (a location with two lines)
//	allocLarge: one block of 1 MiB, in use
//	allocTemp:  50 blocks of 128 bytes, all garbage by the time of the
//	            profile (allocated, not in use)
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// keep holds blocks that stay in use; sink makes temporaries escape to
// the heap (they are garbage once overwritten).
var (
	keep [][]byte
	sink []byte
)

// newBlock is small enough to be inlined into its callers.
func newBlock(n int) []byte {
	return make([]byte, n)
}

//go:noinline
func allocSmall(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, newBlock(64))
	}
}

//go:noinline
func allocLarge() {
	keep = append(keep, make([]byte, 1<<20))
}

//go:noinline
func allocTemp(n int) {
	for i := 0; i < n; i++ {
		sink = make([]byte, 128)
	}
	sink = nil
}

func main() {
	debug := 0
	args := os.Args[1:]
	if len(args) == 2 && args[0] == "-debug1" {
		debug, args = 1, args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: goheap [-debug1] FILE")
		os.Exit(2)
	}
	runtime.MemProfileRate = 1
	keep = make([][]byte, 0, 128)
	allocSmall(100)
	allocLarge()
	allocTemp(50)
	runtime.GC()
	f, err := os.Create(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := pprof.Lookup("heap").WriteTo(f, debug); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
