package rpc

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/experimental"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/peerauth"
	"github.com/narad-io/narad/internal/storage"

	nodepb "github.com/narad-io/narad/internal/rpc/proto"
)

// Pool is the client side of node RPC: one gRPC connection per peer
// address, created on first use and reused by every later call (a
// connection multiplexes calls, so more would only cost handshakes). Every
// method returns nil, a typed *refusal.Error the serving node returned, or
// an *apierr.Error.
type Pool struct {
	secret string
	door   *peerauth.Dialer // the handshake every connection runs first
	creds  credentials.TransportCredentials
	extra  []grpc.DialOption // tests only: e.g. a counting dialer

	mu     sync.Mutex
	conns  map[string]*grpc.ClientConn
	closed bool

	streams fetchStreams // followers' fetch streams (fetchstream.go)
	framed  framedConns  // Commit's and Fetch's connections (framedpool.go)
	tlsConf *tls.Config  // the framed connections' TLS, when NewTLSPool
}

// NewPool returns a pool whose calls present secret. An empty secret sends
// none, which every server refuses (NewServer requires one).
func NewPool(secret string) *Pool { return newPool(secret) }

// NewTLSPool is NewPool over mutual TLS: it presents the client
// certificate of c and verifies servers against its CA.
func NewTLSPool(secret string, c *tls.Config) *Pool {
	p := newPool(secret)
	p.creds = credentials.NewTLS(c)
	p.tlsConf = c
	return p
}

func newPool(secret string, extra ...grpc.DialOption) *Pool {
	// An empty secret gets a random key: it passes no peer's handshake,
	// as it should.
	door, err := peerauth.NewDialer(peerauth.Config{Plane: Plane, Secret: []byte(secret)})
	if err != nil {
		panic(err) // only when the system's random source fails
	}
	return &Pool{secret: secret, door: door, extra: extra, conns: make(map[string]*grpc.ClientConn),
		creds: insecure.NewCredentials()}
}

// Close closes every connection. Calls after Close fail with a 503; calls
// in flight are cut off (also a 503).
func (p *Pool) Close() error {
	p.streams.closeAll()
	p.framed.closeAll()
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.closed = true
	p.mu.Unlock()
	var errs []error
	for _, cc := range conns {
		errs = append(errs, cc.Close())
	}
	return errors.Join(errs...)
}

// conn returns the connection to addr, creating it (without dialling: gRPC
// connects on the first call, and reconnects by itself after a failure).
func (p *Pool) conn(addr string) (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, apierr.Unavailable(unreachableRetry, "node %s unreachable: this node's rpc pool is closed", addr)
	}
	if cc, ok := p.conns[addr]; ok {
		return cc, nil
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(p.creds), // plaintext unless NewTLSPool
		grpc.WithContextDialer(p.door.DialContext),

		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(MaxMessageBytes),
			grpc.MaxCallSendMsgSize(MaxMessageBytes),
			grpc.ForceCodecV2(codec{}), // codec.go: buffers sized to the message
		),
		experimental.WithBufferPool(bufferPool),
		// gRPC's default reconnect backoff grows to 2 minutes, during which
		// every call to a restarted peer fails fast. Capping it at the
		// 503's Retry-After means a caller that honours it meets a fresh
		// attempt.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  100 * time.Millisecond,
				Multiplier: 1.6,
				Jitter:     0.2,
				MaxDelay:   unreachableRetry,
			},
			MinConnectTimeout: DefaultTimeout,
		}),
	}
	if p.secret != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(secretCreds{value: authScheme + p.secret}))
	}
	opts = append(opts, p.extra...)
	cc, err := grpc.NewClient(addr, opts...)
	if err != nil {
		return nil, apierr.New(http.StatusInternalServerError, "node rpc address %q: %v", addr, err)
	}
	p.conns[addr] = cc
	return cc, nil
}

// secretCreds attaches the cluster secret to every call.
type secretCreds struct{ value string }

func (c secretCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{authKey: c.value}, nil
}

// RequireTransportSecurity is false because the cluster plane is plaintext
// until mTLS is configured; the secret is then visible on the wire, which
// the operator is warned about at start (docs/security.md).
func (secretCreds) RequireTransportSecurity() bool { return false }

// invoke runs one call to addr within timeout (or the caller's earlier
// deadline) and maps any failure to a *refusal.Error or an *apierr.Error.
func invoke[T any](ctx context.Context, p *Pool, addr, method string, timeout time.Duration, call func(context.Context, nodepb.NodeClient) (T, error)) (T, error) {
	var zero T
	cc, err := p.conn(addr)
	if err != nil {
		return zero, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := call(ctx, nodepb.NewNodeClient(cc))
	if err != nil {
		return zero, decodeError(addr, method, err)
	}
	return out, nil
}

// Commit commits recs to topic/partition on the node at addr (its owner).
// A non-zero incarnation pins the commit to that incarnation of the topic.
// On success each record's Offset is where the owner stored it, as a local
// commit sets it (storage.NoOffset: left out as a duplicate); an older
// owner that does not say leaves the Offsets as they were.
func (p *Pool) Commit(ctx context.Context, addr, topic string, incarnation uint64, partition int, recs []storage.Record, metaVersion uint64) error {
	req := &nodepb.CommitRequest{Topic: topic, Partition: int32(partition), Records: recordsToPB(recs), MetaVersion: metaVersion,
		Incarnation: incarnation}
	resp := &nodepb.CommitResponse{}
	err, framed := p.callFramed(ctx, addr, "Commit", opCommit, CommitTimeout, req, resp)
	if !framed {
		resp, err = invoke(ctx, p, addr, "Commit", CommitTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.CommitResponse, error) {
			return c.Commit(ctx, req)
		})
	}
	if err != nil {
		return err
	}
	if offs := resp.GetOffsets(); len(offs) == len(recs) {
		for i := range recs {
			recs[i].Offset = offs[i]
		}
	}
	return nil
}

// Forward replays a client-API request on the node at addr within
// req.Timeout (default 5 s). A non-nil error means the request could not
// be replayed — an owner that does not answer in time is a 503 with
// Retry-After — while the replayed request's own refusals come back as a
// response with their status.
func (p *Pool) Forward(ctx context.Context, addr string, req ForwardRequest) (ForwardResponse, error) {
	in := &nodepb.ForwardRequest{
		Method:      req.Method,
		Path:        req.Path,
		RawQuery:    req.RawQuery,
		Body:        req.Body,
		User:        req.User,
		ContentType: req.ContentType,
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	out := &nodepb.ForwardResponse{}
	err, framed := p.callFramed(ctx, addr, "Forward", opForward, timeout, in, out)
	if !framed {
		out, err = invoke(ctx, p, addr, "Forward", timeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.ForwardResponse, error) {
			return c.Forward(ctx, in)
		})
	}
	if err != nil {
		return ForwardResponse{}, err
	}
	return ForwardResponse{
		Status:      int(out.GetStatus()),
		ContentType: out.GetContentType(),
		Body:        out.GetBody(),
		RetryAfter:  fromMillis(out.GetRetryAfterMs()),
		MetaVersion: out.GetMetaVersion(),
	}, nil
}

// Stats describes partitions of topic on the node at addr; exact asks for
// exact tails, opening closed logs if need be (Handler.Stats).
func (p *Pool) Stats(ctx context.Context, addr, topic string, partitions []int, exact bool) ([]PartitionStats, error) {
	in := &nodepb.StatsRequest{Topic: topic, Partitions: intsToPB(partitions), Exact: exact}
	out, err := invoke(ctx, p, addr, "Stats", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.StatsResponse, error) {
		return c.Stats(ctx, in)
	})
	if err != nil {
		return nil, err
	}
	return statsFromPB(out.GetPartitions()), nil
}

// ConfirmTopic asks the leader at addr whether topic name exists and
// whether epoch is its current attach epoch. Only a nil error is an answer.
func (p *Pool) ConfirmTopic(ctx context.Context, addr, name, epoch string) (exists, epochCurrent bool, err error) {
	in := &nodepb.ConfirmTopicRequest{Name: name, Epoch: epoch}
	out, err := invoke(ctx, p, addr, "ConfirmTopic", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.ConfirmTopicResponse, error) {
		return c.ConfirmTopic(ctx, in)
	})
	if err != nil {
		return false, false, err
	}
	return out.GetExists(), out.GetEpochCurrent(), nil
}

// TopicIncarnation asks the leader at addr whether topic name exists and
// its incarnation (0 from a leader older than incarnations). Only a nil
// error is an answer.
func (p *Pool) TopicIncarnation(ctx context.Context, addr, name string) (exists bool, incarnation uint64, err error) {
	in := &nodepb.ConfirmTopicRequest{Name: name}
	out, err := invoke(ctx, p, addr, "ConfirmTopic", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.ConfirmTopicResponse, error) {
		return c.ConfirmTopic(ctx, in)
	})
	if err != nil {
		return false, 0, err
	}
	return out.GetExists(), out.GetIncarnation(), nil
}

// Wait parks on the node at addr until topic may have records there, or
// wait ends (see Handler.Wait). The call's budget is the wait plus the
// default timeout.
func (p *Pool) Wait(ctx context.Context, addr, topic string, wait time.Duration) (bool, error) {
	in := &nodepb.WaitRequest{Topic: topic, WaitMs: toMillis(wait)}
	out, err := invoke(ctx, p, addr, "Wait", wait+DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.WaitResponse, error) {
		return c.Wait(ctx, in)
	})
	if err != nil {
		return false, err
	}
	return out.GetWoken(), nil
}

// Join asks the node at addr to admit m.
func (p *Pool) Join(ctx context.Context, addr string, m Member) (JoinResult, error) {
	in := &nodepb.JoinRequest{Member: memberToPB(m)}
	out, err := invoke(ctx, p, addr, "Join", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.JoinResponse, error) {
		return c.Join(ctx, in)
	})
	if err != nil {
		return JoinResult{}, err
	}
	return JoinResult{Admitted: out.GetAdmitted(), LeaderID: out.GetLeaderId(), LeaderRPCAddr: out.GetLeaderRpcAddr()}, nil
}

// Heartbeat tells the node at addr (the leader) that m is alive, and
// which leaders m's followers have not reached.
func (p *Pool) Heartbeat(ctx context.Context, addr string, m Member, unreachable ...UnreachableLeader) error {
	in := &nodepb.HeartbeatRequest{Member: memberToPB(m), Unreachable: unreachableToPB(unreachable)}
	_, err := invoke(ctx, p, addr, "Heartbeat", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.HeartbeatResponse, error) {
		return c.Heartbeat(ctx, in)
	})
	return err
}

// ReadIndex asks the leader at addr for a metastore version covering every
// write acknowledged before the call. An older leader answers 501.
func (p *Pool) ReadIndex(ctx context.Context, addr string) (uint64, error) {
	out, err := invoke(ctx, p, addr, "ReadIndex", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.ReadIndexResponse, error) {
		return c.ReadIndex(ctx, &nodepb.ReadIndexRequest{})
	})
	if err != nil {
		return 0, err
	}
	return out.GetMetaVersion(), nil
}

// ConfirmOwner asks the leader at addr who owns topic/partition.
func (p *Pool) ConfirmOwner(ctx context.Context, addr, topic string, partition int) (owner, target string, err error) {
	in := &nodepb.ConfirmOwnerRequest{Topic: topic, Partition: int32(partition)}
	out, err := invoke(ctx, p, addr, "ConfirmOwner", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.ConfirmOwnerResponse, error) {
		return c.ConfirmOwner(ctx, in)
	})
	if err != nil {
		return "", "", err
	}
	return out.GetOwner(), out.GetTarget(), nil
}

// Flip asks the leader at addr to complete a move.
func (p *Pool) Flip(ctx context.Context, addr, topic string, partition int, from, to string) error {
	in := &nodepb.FlipRequest{Topic: topic, Partition: int32(partition), From: from, To: to}
	_, err := invoke(ctx, p, addr, "Flip", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.FlipResponse, error) {
		return c.Flip(ctx, in)
	})
	return err
}

// MoveFreeze freezes (ttl > 0) or thaws (ttl 0) a partition on its owner.
func (p *Pool) MoveFreeze(ctx context.Context, addr, topic string, partition int, ttl time.Duration, holder string) (uint64, error) {
	in := &nodepb.MoveFreezeRequest{Topic: topic, Partition: int32(partition), TtlMs: toMillis(ttl), Holder: holder}
	out, err := invoke(ctx, p, addr, "MoveFreeze", CommitTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.MoveFreezeResponse, error) {
		return c.MoveFreeze(ctx, in)
	})
	if err != nil {
		return 0, err
	}
	return out.GetHighWatermark(), nil
}

// MoveFiles lists a partition directory on its owner.
func (p *Pool) MoveFiles(ctx context.Context, addr, topic string, partition int) ([]MoveFile, uint64, error) {
	in := &nodepb.MoveFilesRequest{Topic: topic, Partition: int32(partition)}
	out, err := invoke(ctx, p, addr, "MoveFiles", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.MoveFilesResponse, error) {
		return c.MoveFiles(ctx, in)
	})
	if err != nil {
		return nil, 0, err
	}
	files := make([]MoveFile, len(out.GetFiles()))
	for i, f := range out.GetFiles() {
		files[i] = MoveFile{Name: f.GetName(), Size: f.GetSize()}
	}
	return files, out.GetHighWatermark(), nil
}

// MoveRead reads part of a file of a partition directory on its owner.
func (p *Pool) MoveRead(ctx context.Context, addr, topic string, partition int, name string, offset, length int64) ([]byte, error) {
	in := &nodepb.MoveReadRequest{Topic: topic, Partition: int32(partition), Name: name, Offset: offset, Length: length}
	out, err := invoke(ctx, p, addr, "MoveRead", CommitTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.MoveReadResponse, error) {
		return c.MoveRead(ctx, in)
	})
	if err != nil {
		return nil, err
	}
	return out.GetData(), nil
}
