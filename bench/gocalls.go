// SPDX-License-Identifier: GPL-2.0-or-later
// gocalls.go - bench/golang's Go workload: main calls step N times, step
// runs K rounds of arithmetic and calls leaf (2N calls). It prints the
// calls, a checksum, and what its loop took by its own clocks: wall and
// the process's CPU time (ns), then the process's CPU time at the end.
// ccalls.c is the same program in C.
package main

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

//go:noinline
func leaf(x uint64) uint64 {
	return x*2654435761 + 1
}

//go:noinline
func step(x uint64, k int) uint64 {
	for i := 0; i < k; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return leaf(x) ^ (x >> 3)
}

func cpuNs() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func main() {
	n, k := 750000, 100
	if len(os.Args) > 2 {
		n, _ = strconv.Atoi(os.Args[1])
		k, _ = strconv.Atoi(os.Args[2])
	}
	var sum uint64
	t0, c0 := time.Now(), cpuNs()
	for i := 0; i < n; i++ {
		sum += step(sum+uint64(i), k)
	}
	wall, cpu := time.Since(t0).Nanoseconds(), cpuNs()-c0
	fmt.Printf("calls %d checksum %016x loop_wall_ns %d loop_cpu_ns %d cpu_ns %d\n",
		2*n, sum, wall, cpu, cpuNs())
}
