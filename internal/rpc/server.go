package rpc

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/peerauth"
	nodepb "github.com/narad-io/narad/internal/rpc/proto"
	"github.com/narad-io/narad/internal/storage"
)

// Every connection first passes the cluster port's handshake (package
// peerauth: a challenge–response keyed by the secret, before gRPC parses a
// byte); the secret then also travels as per-RPC metadata, so every call
// is checked as well.
const (
	authKey    = "authorization" // gRPC metadata keys are lower case
	authScheme = "narad-secret "
)

// defaultStopGrace bounds how long Stop waits for in-flight calls before
// cutting them off: long enough for a commit's fsync, short enough that a
// stuck forward cannot hold a shutdown hostage.
const defaultStopGrace = 10 * time.Second

// Server serves node RPC to the cluster for one Handler.
type Server struct {
	g       *grpc.Server
	secret  string
	want    [sha256.Size]byte // hash of the expected authorization value
	log     *slog.Logger
	grace   time.Duration
	tls     *tls.Config         // mutual TLS when set
	refused func(reason string) // told of every connection the handshake refused
	// callsOnly serves as a release before FetchStream did (tests of the
	// fallback to Fetch calls).
	callsOnly bool
	// grpcOnly serves gRPC alone, as a release before framed connections
	// did (WithoutFramed).
	grpcOnly bool
	framed   *framedServer // the node port's framed connections (framed.go)

	muxMu   sync.Mutex
	mux     *portMux // set by Serve: the listener gRPC serves
	stopped bool
}

// ServerOption adjusts a Server.
type ServerOption func(*Server)

// WithLogger sets where internal handler failures and panics are logged
// (they reach the caller only as a bare 500). Default: slog.Default().
func WithLogger(l *slog.Logger) ServerOption { return func(s *Server) { s.log = l } }

// WithTLS serves over mutual TLS (docs/security.md): a caller without a
// certificate from the cluster CA never reaches the secret check.
func WithTLS(c *tls.Config) ServerOption { return func(s *Server) { s.tls = c } }

// WithRefused sets the callback told the reason of every connection
// refused by the peer handshake (for the metric).
func WithRefused(f func(reason string)) ServerOption { return func(s *Server) { s.refused = f } }

// WithoutFramed serves gRPC alone, handing every connection to it as a
// release before framed connections did; callers then call this node
// through gRPC (framedpool.go).
func WithoutFramed() ServerOption { return func(s *Server) { s.grpcOnly = true } }

// ServesFramed reports whether the server serves framed connections.
func (s *Server) ServesFramed() bool { return !s.grpcOnly }

// WithStopGrace sets how long Stop waits for in-flight calls.
func WithStopGrace(d time.Duration) ServerOption { return func(s *Server) { s.grace = d } }

// NewServer builds a server that answers only callers presenting secret.
// An empty secret is an error: a cluster plane open to anyone who can reach
// the port must never start by accident.
func NewServer(secret string, h Handler, opts ...ServerOption) (*Server, error) {
	if secret == "" {
		return nil, errors.New("rpc: the cluster secret is empty; node RPC refuses to serve without one")
	}
	if !printableASCII(secret) {
		// It travels as a gRPC header value, which only carries printable
		// ASCII; better to refuse at start than to fail every call later.
		return nil, errors.New("rpc: the cluster secret must be printable ASCII")
	}
	if h == nil {
		return nil, errors.New("rpc: nil handler")
	}
	s := &Server{
		secret: secret,
		want:   sha256.Sum256([]byte(authScheme + secret)),
		log:    slog.Default(),
		grace:  defaultStopGrace,
	}
	for _, o := range opts {
		o(s)
	}
	gopts := []grpc.ServerOption{}
	if s.tls != nil {
		gopts = append(gopts, grpc.Creds(credentials.NewTLS(s.tls)))
	}
	s.g = grpc.NewServer(append(gopts,
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.ChainUnaryInterceptor(s.unary),
		grpc.ChainStreamInterceptor(s.stream),
		// Without this, gRPC answers an unknown method before any
		// interceptor runs, so an unauthenticated caller could probe which
		// methods exist. Routed through the stream interceptor, it is
		// refused like everything else first.
		grpc.UnknownServiceHandler(unknownMethod),
		// Calls run on long-lived workers whose stacks are already grown,
		// not on a fresh goroutine each (gRPC starts one anyway when every
		// worker is busy, so a long-poll Wait never holds a commit back):
		// a fresh goroutine's stack growth was 4% of a cluster node's CPU
		// under produce load, and BenchmarkCommitRoundTrip/grpc spends 60 µs of
		// CPU per call instead of 71-77.
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
		grpc.ForceServerCodecV2(codec{}), // codec.go: buffers sized to the message
		experimental.BufferPool(bufferPool),
	)...)
	base := &service{h: h, log: s.log}
	var svc nodepb.NodeServer = base
	if s.callsOnly {
		svc = callsOnlyService{base}
	}
	nodepb.RegisterNodeServer(s.g, svc)
	s.framed = newFramedServer(base, s.want, s.tls, s.log)
	return s, nil
}

// Serve accepts connections on lis until Stop, each only once it passed
// the peer handshake; it returns nil after Stop.
func (s *Server) Serve(lis net.Listener) error {
	authed, err := peerauth.Wrap(lis, peerauth.Config{Plane: Plane, Secret: []byte(s.secret), Refused: s.refused, Logger: s.log})
	if err != nil {
		lis.Close()
		return err
	}
	if s.grpcOnly {
		return s.g.Serve(authed)
	}
	s.muxMu.Lock()
	if s.stopped {
		s.muxMu.Unlock()
		authed.Close()
		return nil
	}
	s.mux = s.framed.listen(authed)
	s.muxMu.Unlock()
	return s.g.Serve(s.mux)
}

// Plane is node RPC's name in the peer handshake: it labels its key and
// its refusals.
const Plane = "rpc"

// Stop stops accepting, lets in-flight calls finish for at most the grace
// period, then cancels the rest (their handlers see ctx done). When it
// returns, no call is running and no server goroutine is left.
func (s *Server) Stop() {
	s.muxMu.Lock()
	s.stopped = true // gRPC's stop closes the listener, s.mux
	s.muxMu.Unlock()
	framedDone := make(chan struct{})
	go func() {
		s.framed.stop(s.grace)
		close(framedDone)
	}()
	done := make(chan struct{})
	go func() {
		s.g.GracefulStop()
		close(done)
	}()
	t := time.NewTimer(s.grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		s.g.Stop()
		<-done
	}
	<-framedDone
}

var errRefused = status.Error(codes.Unauthenticated, "cluster secret refused")

// authorized compares hashes so the comparison is constant-time regardless
// of the presented value's length (ConstantTimeCompare returns early on a
// length mismatch, which would leak the secret's length).
func (s *Server) authorized(ctx context.Context) bool {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return false
	}
	vals := md.Get(authKey)
	if len(vals) != 1 {
		return false
	}
	got := sha256.Sum256([]byte(vals[0]))
	return subtle.ConstantTimeCompare(got[:], s.want[:]) == 1
}

func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (resp any, err error) {
	if !s.authorized(ctx) {
		return nil, errRefused
	}
	defer s.recoverInto(info.FullMethod, &err)
	resp, err = next(ctx, req)
	if err != nil {
		return nil, s.finish(info.FullMethod, err)
	}
	return resp, nil
}

func (s *Server) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) (err error) {
	if !s.authorized(ss.Context()) {
		return errRefused
	}
	defer s.recoverInto(info.FullMethod, &err)
	if err = next(srv, ss); err != nil {
		return s.finish(info.FullMethod, err)
	}
	return nil
}

// finish encodes a handler error for the wire. Errors that already are gRPC
// statuses (the unknown-method answer) pass through unchanged; a failure
// that is not a refusal (apierr or typed) is logged here, because the caller only gets 500.
func (s *Server) finish(method string, err error) error {
	if _, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return err
	}
	if !isClientErr(err) {
		s.log.Error("node rpc handler failed", "method", method, "err", err)
	}
	return encodeError(err)
}

// recoverInto turns a handler panic into a 500 instead of killing the node,
// as net/http does for a local request.
func (s *Server) recoverInto(method string, err *error) {
	if p := recover(); p != nil {
		s.log.Error("node rpc handler panicked", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		*err = encodeError(fmt.Errorf("panic: %v", p))
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func unknownMethod(_ any, ss grpc.ServerStream) error {
	m, _ := grpc.MethodFromServerStream(ss)
	return status.Errorf(codes.Unimplemented, "unknown method %s", m)
}

// service adapts the generated server interface to Handler. It returns the
// handler's errors untouched; the interceptor encodes them.
type service struct {
	nodepb.UnimplementedNodeServer
	h   Handler
	log *slog.Logger // a streamed call's failures (Server.finish logs a call's)
}

// failed logs a streamed or framed call's failure that is not a refusal
// (Server.finish logs a gRPC call's): the caller only learns "internal
// error".
func (s *service) failed(method string, err error) {
	if !isClientErr(err) {
		s.log.Error("node rpc handler failed", "method", method, "err", err)
	}
}

func (s *service) Commit(ctx context.Context, req *nodepb.CommitRequest) (*nodepb.CommitResponse, error) {
	recs, err := recordsFromPB(req.GetRecords())
	if err != nil {
		return nil, err
	}
	for i := range recs {
		recs[i].Offset = storage.NoOffset // the handler's commit sets the stored ones'
	}
	if err := s.h.Commit(ctx, req.GetTopic(), req.GetIncarnation(), int(req.GetPartition()), recs, req.GetMetaVersion()); err != nil {
		return nil, err
	}
	offsets := make([]uint64, len(recs))
	for i := range recs {
		offsets[i] = recs[i].Offset
	}
	return &nodepb.CommitResponse{Offsets: offsets}, nil
}

func (s *service) Forward(ctx context.Context, req *nodepb.ForwardRequest) (*nodepb.ForwardResponse, error) {
	resp, err := s.h.Forward(ctx, ForwardRequest{
		Method:      req.GetMethod(),
		Path:        req.GetPath(),
		RawQuery:    req.GetRawQuery(),
		Body:        req.GetBody(),
		ContentType: req.GetContentType(),
		User:        req.GetUser(),
	})
	if err != nil {
		return nil, err
	}
	return &nodepb.ForwardResponse{
		Status:       int32(resp.Status),
		ContentType:  resp.ContentType,
		Body:         resp.Body,
		RetryAfterMs: toMillis(resp.RetryAfter),
		MetaVersion:  resp.MetaVersion,
	}, nil
}

func (s *service) Stats(ctx context.Context, req *nodepb.StatsRequest) (*nodepb.StatsResponse, error) {
	ss, err := s.h.Stats(ctx, req.GetTopic(), intsFromPB(req.GetPartitions()), req.GetExact())
	if err != nil {
		return nil, err
	}
	return &nodepb.StatsResponse{Partitions: statsToPB(ss)}, nil
}

func (s *service) ConfirmTopic(ctx context.Context, req *nodepb.ConfirmTopicRequest) (*nodepb.ConfirmTopicResponse, error) {
	exists, current, inc, err := s.h.ConfirmTopic(ctx, req.GetName(), req.GetEpoch())
	if err != nil {
		return nil, err
	}
	return &nodepb.ConfirmTopicResponse{Exists: exists, EpochCurrent: current, Incarnation: inc}, nil
}

func (s *service) Join(ctx context.Context, req *nodepb.JoinRequest) (*nodepb.JoinResponse, error) {
	res, err := s.h.Join(ctx, memberFromPB(req.GetMember()))
	if err != nil {
		return nil, err
	}
	return &nodepb.JoinResponse{Admitted: res.Admitted, LeaderId: res.LeaderID, LeaderRpcAddr: res.LeaderRPCAddr}, nil
}

func (s *service) Heartbeat(ctx context.Context, req *nodepb.HeartbeatRequest) (*nodepb.HeartbeatResponse, error) {
	if err := s.h.Heartbeat(ctx, memberFromPB(req.GetMember()), unreachableFromPB(req.GetUnreachable())); err != nil {
		return nil, err
	}
	return &nodepb.HeartbeatResponse{}, nil
}

func (s *service) Wait(ctx context.Context, req *nodepb.WaitRequest) (*nodepb.WaitResponse, error) {
	woken, err := s.h.Wait(ctx, req.GetTopic(), fromMillis(req.GetWaitMs()))
	if err != nil {
		return nil, err
	}
	return &nodepb.WaitResponse{Woken: woken}, nil
}

func (s *service) ConfirmOwner(ctx context.Context, req *nodepb.ConfirmOwnerRequest) (*nodepb.ConfirmOwnerResponse, error) {
	owner, target, err := s.h.ConfirmOwner(ctx, req.GetTopic(), int(req.GetPartition()))
	if err != nil {
		return nil, err
	}
	return &nodepb.ConfirmOwnerResponse{Owner: owner, Target: target}, nil
}

func (s *service) ReadIndex(ctx context.Context, _ *nodepb.ReadIndexRequest) (*nodepb.ReadIndexResponse, error) {
	v, err := s.h.ReadIndex(ctx)
	if err != nil {
		return nil, err
	}
	return &nodepb.ReadIndexResponse{MetaVersion: v}, nil
}

func (s *service) Flip(ctx context.Context, req *nodepb.FlipRequest) (*nodepb.FlipResponse, error) {
	if err := s.h.Flip(ctx, req.GetTopic(), int(req.GetPartition()), req.GetFrom(), req.GetTo()); err != nil {
		return nil, err
	}
	return &nodepb.FlipResponse{}, nil
}

func (s *service) MoveFreeze(ctx context.Context, req *nodepb.MoveFreezeRequest) (*nodepb.MoveFreezeResponse, error) {
	hwm, err := s.h.MoveFreeze(ctx, req.GetTopic(), int(req.GetPartition()), fromMillis(req.GetTtlMs()), req.GetHolder())
	if err != nil {
		return nil, err
	}
	return &nodepb.MoveFreezeResponse{HighWatermark: hwm}, nil
}

func (s *service) MoveFiles(ctx context.Context, req *nodepb.MoveFilesRequest) (*nodepb.MoveFilesResponse, error) {
	files, hwm, err := s.h.MoveFiles(ctx, req.GetTopic(), int(req.GetPartition()))
	if err != nil {
		return nil, err
	}
	out := &nodepb.MoveFilesResponse{HighWatermark: hwm}
	for _, f := range files {
		out.Files = append(out.Files, &nodepb.MoveFile{Name: f.Name, Size: f.Size})
	}
	return out, nil
}

func (s *service) MoveRead(ctx context.Context, req *nodepb.MoveReadRequest) (*nodepb.MoveReadResponse, error) {
	if req.GetLength() < 0 || req.GetLength() > MaxMoveRead || req.GetOffset() < 0 {
		return nil, apierr.BadRequest("move read: offset %d length %d out of range", req.GetOffset(), req.GetLength())
	}
	data, err := s.h.MoveRead(ctx, req.GetTopic(), int(req.GetPartition()), req.GetName(), req.GetOffset(), req.GetLength())
	if err != nil {
		return nil, err
	}
	return &nodepb.MoveReadResponse{Data: data}, nil
}
