// Package fncalls counts the Fn API calls that the Beam SDK workers of this
// process make to the runner: state requests (each one a round trip on the
// state channel) and the bundles they are asked to process, by transform.
// It sees what the runner and the worker say to each other, so its counts
// are exact and do not depend on the runner: a benchmark with workers in
// its own process (a LOOPBACK environment, or Prism in process) calls
// Install before the first job, Reset before each run and Read after it.
//
// Install replaces the Go SDK's dialer (grpcx.Dial) with one that wraps
// every gRPC stream the worker opens and looks at the messages going by;
// nothing is changed on the wire. Workers in processes of their own
// (PROCESS, EXTERNAL, Dataflow) are not counted.
package fncalls

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	fnpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/fnexecution_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
)

// State is what a transform asked of the state channel.
type State struct {
	Gets, Appends, Clears int64
}

// Calls is every state request: one round trip each.
func (s State) Calls() int64 { return s.Gets + s.Appends + s.Clears }

// Counts are the calls counted since the last Reset, by the unique name of
// the transform (its scope path, such as "join.Interval/interval.joinFn")
// that the runner registered with the worker.
type Counts struct {
	State map[string]State
	// Bundles is how many bundles the runner asked for that hold the
	// transform.
	Bundles map[string]int64
}

// Matching returns the sum of the state calls and bundles of the
// transforms whose name match says yes to.
func (c Counts) Matching(match func(name string) bool) (State, int64) {
	var st State
	var bundles int64
	for name, s := range c.State {
		if match(name) {
			st.Gets += s.Gets
			st.Appends += s.Appends
			st.Clears += s.Clears
		}
	}
	for name, n := range c.Bundles {
		if match(name) {
			bundles += n
		}
	}
	return st, bundles
}

var (
	installOnce sync.Once

	mu          sync.Mutex
	names       = map[string]string{}   // transform ID -> unique name, from the registered descriptors
	descriptors = map[string][]string{} // bundle descriptor ID -> its transforms' IDs
	state       = map[string]State{}    // by transform ID
	bundles     = map[string]int64{}    // by bundle descriptor ID
)

// Install makes the SDK workers started in this process from now on count
// their calls. Call it before the first job; it is safe to call again.
func Install() {
	installOnce.Do(func() { grpcx.Dial = dial })
}

// Reset sets the counts to zero. The names of the transforms registered so
// far are kept, since a runner registers a descriptor once per worker.
func Reset() {
	mu.Lock()
	defer mu.Unlock()
	state = map[string]State{}
	bundles = map[string]int64{}
}

// Read returns the counts since the last Reset.
func Read() Counts {
	mu.Lock()
	defer mu.Unlock()
	c := Counts{State: map[string]State{}, Bundles: map[string]int64{}}
	for id, s := range state {
		c.State[nameOf(id)] = s
	}
	for desc, n := range bundles {
		for _, id := range descriptors[desc] {
			c.Bundles[nameOf(id)] += n
		}
	}
	return c
}

func nameOf(id string) string {
	if n, ok := names[id]; ok {
		return n
	}
	return id
}

// dial is grpcx.DefaultDial (an insecure connection, blocking until it is
// ready or the timeout passes, messages as large as the SDK takes) with
// the counting interceptor.
func dial(ctx context.Context, endpoint string, timeout time.Duration) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cc, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32)),
		grpc.WithStreamInterceptor(intercept), grpc.WithUnaryInterceptor(interceptUnary))
	if err != nil {
		return nil, fmt.Errorf("fncalls: dialing %v: %w", endpoint, err)
	}
	cc.Connect()
	for s := cc.GetState(); s != connectivity.Ready; s = cc.GetState() {
		if !cc.WaitForStateChange(ctx, s) {
			cc.Close()
			return nil, fmt.Errorf("fncalls: dialing %v: %w", endpoint, ctx.Err())
		}
	}
	return cc, nil
}

func intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return countingStream{s}, nil
}

// interceptUnary learns the descriptors that a worker fetches
// (GetProcessBundleDescriptor) rather than receives in a Register
// instruction.
func interceptUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if d, ok := reply.(*fnpb.ProcessBundleDescriptor); ok && err == nil {
		mu.Lock()
		learn(d)
		mu.Unlock()
	}
	return err
}

// countingStream counts the state requests a worker sends and the
// instructions it receives.
type countingStream struct{ grpc.ClientStream }

func (s countingStream) SendMsg(m any) error {
	if r, ok := m.(*fnpb.StateRequest); ok {
		countState(r)
	}
	return s.ClientStream.SendMsg(m)
}

func (s countingStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if r, ok := m.(*fnpb.InstructionRequest); ok && err == nil {
		countInstruction(r)
	}
	return err
}

func countState(r *fnpb.StateRequest) {
	k := r.GetStateKey()
	var id string
	switch {
	case k.GetBagUserState() != nil:
		id = k.GetBagUserState().GetTransformId()
	case k.GetMultimapUserState() != nil:
		id = k.GetMultimapUserState().GetTransformId()
	case k.GetMultimapKeysUserState() != nil:
		id = k.GetMultimapKeysUserState().GetTransformId()
	case k.GetOrderedListUserState() != nil:
		id = k.GetOrderedListUserState().GetTransformId()
	case k.GetIterableSideInput() != nil:
		id = k.GetIterableSideInput().GetTransformId()
	case k.GetMultimapSideInput() != nil:
		id = k.GetMultimapSideInput().GetTransformId()
	case k.GetMultimapKeysSideInput() != nil:
		id = k.GetMultimapKeysSideInput().GetTransformId()
	default:
		id = "(runner)"
	}
	mu.Lock()
	defer mu.Unlock()
	s := state[id]
	switch {
	case r.GetGet() != nil:
		s.Gets++
	case r.GetAppend() != nil:
		s.Appends++
	case r.GetClear() != nil:
		s.Clears++
	}
	state[id] = s
}

func countInstruction(r *fnpb.InstructionRequest) {
	mu.Lock()
	defer mu.Unlock()
	if reg := r.GetRegister(); reg != nil {
		for _, d := range reg.GetProcessBundleDescriptor() {
			learn(d)
		}
	}
	if pb := r.GetProcessBundle(); pb != nil {
		bundles[pb.GetProcessBundleDescriptorId()]++
	}
}

// learn records a descriptor's transforms; mu is held.
func learn(d *fnpb.ProcessBundleDescriptor) {
	var ids []string
	for id, t := range d.GetTransforms() {
		names[id] = t.GetUniqueName()
		ids = append(ids, id)
	}
	descriptors[d.GetId()] = ids
}
