// A gRPC server and client on gRPC-Go over Go's crypto/tls (no OpenSSL), for
// tests/record/test_l7_gotls.sh; raw bytes through a codec of its own (no protoc).
//
//	gogrpc server ADDR CERT KEY   serves /galatop.Test/Echo (answers what it gets) and
//	                              /galatop.Test/Fail (INVALID_ARGUMENT) until killed, on
//	                              connections x/net/netutil's LimitListener wraps
//	gogrpc client ADDR N F        N Echo then F Fail calls on one connection, then prints
//	                              "requests", "errors" (calls that failed), "p50_ns" (the
//	                              median Echo call as the client timed it), "cpu_ns" and
//	                              "nivcsw" (its CPU time and involuntary context switches);
//	                              with $GT_CLIENT_TIMES set, each Echo call's CLOCK_MONOTONIC
//	                              readings before and after it go to that file ("T0 T1")
package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/net/netutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"
)

// raw passes messages through as bytes: gRPC's framing without protobuf.
type raw struct{}

func (raw) Marshal(v interface{}) ([]byte, error) { return *v.(*[]byte), nil }
func (raw) Unmarshal(b []byte, v interface{}) error {
	*v.(*[]byte) = append([]byte(nil), b...)
	return nil
}
func (raw) Name() string   { return "proto" }
func (raw) String() string { return "proto" }

func die(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// handle answers every method: Echo with the request, Fail with INVALID_ARGUMENT.
func handle(srv interface{}, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	var b []byte
	if err := stream.RecvMsg(&b); err != nil {
		return err
	}
	if method == "/galatop.Test/Fail" {
		return status.Error(codes.InvalidArgument, "bad request")
	}
	return stream.SendMsg(&b)
}

func main() {
	if len(os.Args) == 5 && os.Args[1] == "server" {
		cert, err := tls.LoadX509KeyPair(os.Args[3], os.Args[4])
		if err != nil {
			die(err)
		}
		s := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}})),
			grpc.CustomCodec(raw{}), grpc.UnknownServiceHandler(handle))
		ln, err := net.Listen("tcp", os.Args[2])
		if err != nil {
			die(err)
		}
		// As many servers do: the accepted connections come wrapped (a struct whose first
		// field is the net.Conn), and tls.Conn.conn is the wrapper.
		ln = netutil.LimitListener(ln, 64)
		die(s.Serve(ln))
	}
	if len(os.Args) != 5 || os.Args[1] != "client" {
		fmt.Fprintln(os.Stderr, "usage: gogrpc server ADDR CERT KEY | gogrpc client ADDR N F")
		os.Exit(2)
	}
	n, _ := strconv.Atoi(os.Args[3])
	f, _ := strconv.Atoi(os.Args[4])
	conn, err := grpc.Dial(os.Args[2], grpc.WithBlock(),
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})))
	if err != nil {
		die(err)
	}
	ctx := context.Background()
	var lat []int64
	var times *os.File
	if path := os.Getenv("GT_CLIENT_TIMES"); path != "" {
		if times, err = os.Create(path); err != nil {
			die(err)
		}
	}
	requests, errors := 0, 0
	for i := 0; i < n+f; i++ {
		method := "/galatop.Test/Echo"
		if i >= n {
			method = "/galatop.Test/Fail"
		}
		in, out := []byte("ping"), []byte(nil)
		var m0, m1 int64
		if times != nil {
			m0 = monotonic()
		}
		t0 := time.Now()
		err := conn.Invoke(ctx, method, &in, &out, grpc.ForceCodec(raw{}))
		took := time.Since(t0)
		if times != nil {
			m1 = monotonic()
		}
		requests++
		if err != nil {
			errors++
		} else {
			lat = append(lat, int64(took))
			if times != nil && i < n {
				fmt.Fprintf(times, "%d %d\n", m0, m1)
			}
		}
	}
	conn.Close()
	if times != nil {
		times.Close()
	}
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("requests %d\nerrors %d\np50_ns %d\ncpu_ns %d\nnivcsw %d\n", requests, errors,
		lat[(len(lat)-1)/2], (ru.Utime.Nano() + ru.Stime.Nano()), ru.Nivcsw)
}

// monotonic reads CLOCK_MONOTONIC, galatop's clock, with a system call (Go does not export its
// own readings of it); outside the calls' timed windows.
func monotonic() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}
