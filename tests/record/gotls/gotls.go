// An HTTPS server and client on Go's crypto/tls and net/http, for tests/record/test_l7_gotls.sh.
//
//	gotls server ADDR CERT KEY       serves /ok (200 "ok") and /missing (404) until killed
//	gotls client HOST:PORT N [PATH...]  N GETs of each PATH in turn on one connection, then
//	                                    prints "requests", "errors" (4xx/5xx), "p50_ns"
//	                                    of the first PATH, and its CPU time ("cpu_ns") and
//	                                    involuntary context switches ("nivcsw"); with
//	                                    $GT_CLIENT_TIMES set, the first PATH's requests'
//	                                    CLOCK_MONOTONIC readings before the write and after
//	                                    the read that completes the response go to that
//	                                    file ("T0 T1")
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// complete parses b as one whole HTTP response (headers and Content-Length body), or nil
// when more bytes are needed.
func complete(b []byte) *http.Response {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
	if err != nil {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || int64(len(body)) != resp.ContentLength {
		return nil
	}
	return resp
}

func main() {
	if len(os.Args) >= 5 && os.Args[1] == "server" {
		http.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "ok\n")
		})
		http.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
			http.NotFound(w, r)
		})
		srv := &http.Server{Addr: os.Args[2]}
		fmt.Fprintln(os.Stderr, srv.ListenAndServeTLS(os.Args[3], os.Args[4]))
		os.Exit(1)
	}
	if len(os.Args) < 4 || os.Args[1] != "client" {
		fmt.Fprintln(os.Stderr, "usage: gotls server ADDR CERT KEY | gotls client HOST:PORT N [PATH...]")
		os.Exit(2)
	}
	n, _ := strconv.Atoi(os.Args[3])
	paths := os.Args[4:]
	if len(paths) == 0 {
		paths = []string{"/ok"}
	}
	// One keep-alive connection; each request's clock is read right before its TLS write
	// and right after the read that completes its response (parsed after by net/http's
	// reader): the calls galatop's probes see, without the client's own work around them.
	conn, err := tls.Dial("tcp", os.Args[2], &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var lat []int64
	var times *os.File
	if path := os.Getenv("GT_CLIENT_TIMES"); path != "" {
		if times, err = os.Create(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	requests, errors := 0, 0
	buf := make([]byte, 65536)
	for i := 0; i < n; i++ {
		for k, p := range paths {
			req := []byte("GET " + p + " HTTP/1.1\r\nHost: " + os.Args[2] + "\r\n\r\n")
			have := 0
			var resp *http.Response
			var m0, m1 int64
			if times != nil {
				m0 = monotonic()
			}
			t0 := time.Now()
			if _, err := conn.Write(req); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			var took time.Duration
			for resp == nil {
				m, err := conn.Read(buf[have:])
				took = time.Since(t0)
				if times != nil {
					m1 = monotonic()
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				have += m
				resp = complete(buf[:have])
			}
			if k == 0 {
				lat = append(lat, int64(took))
				if times != nil {
					fmt.Fprintf(times, "%d %d\n", m0, m1)
				}
			}
			requests++
			if resp.StatusCode >= 400 {
				errors++
			}
		}
	}
	if times != nil {
		times.Close()
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("requests %d\nerrors %d\np50_ns %d\ncpu_ns %d\nnivcsw %d\n", requests, errors,
		lat[(len(lat)-1)/2], ru.Utime.Nano()+ru.Stime.Nano(), ru.Nivcsw)
}

// monotonic reads CLOCK_MONOTONIC, galatop's clock, with a system call (Go does not export its
// own readings of it); outside the requests' timed windows.
func monotonic() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}
