package rpc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/narad-io/narad/internal/refusal"
	nodepb "github.com/narad-io/narad/internal/rpc/proto"
	"github.com/narad-io/narad/internal/storage"
)

// framedOpen is how many framed connections p has open, and whether it
// has a gRPC connection to addr at all.
func framedOpen(p *Pool, addr string) (open int, grpcConn bool) {
	p.framed.mu.Lock()
	open = len(p.framed.open)
	p.framed.mu.Unlock()
	p.mu.Lock()
	_, grpcConn = p.conns[addr]
	p.mu.Unlock()
	return open, grpcConn
}

// Commits and fetches to a node that serves framed connections ride one
// of them, one call after another, and never open a gRPC connection; the
// answers are the calls' own.
func TestCommitsAndFetchesRideOneFramedConnection(t *testing.T) {
	f := &fake{
		commit: func(_ context.Context, topic string, _ uint64, p int, recs []storage.Record, _ uint64) error {
			for i := range recs {
				recs[i].Offset = uint64(100*p + i)
			}
			return nil
		},
		fetch: func(_ context.Context, req FetchRequest) (FetchResponse, error) {
			if req.Offset == 99 {
				return FetchResponse{}, refusal.New(refusal.ErrStaleEpoch, 0, "stale")
			}
			return FetchResponse{Epoch: req.Epoch, Committed: req.Offset + 1,
				Records: []storage.Record{{Offset: req.Offset, CommittedAt: 7, Payload: []byte("p")}}}, nil
		},
	}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	ctx := context.Background()
	for i := range 3 {
		recs := []storage.Record{{Payload: []byte("a")}, {Payload: []byte("b")}}
		if err := p.Commit(ctx, addr, "t", 0, i, recs, 0); err != nil {
			t.Fatal(err)
		}
		if recs[0].Offset != uint64(100*i) || recs[1].Offset != uint64(100*i+1) {
			t.Fatalf("commit %d: offsets %d, %d", i, recs[0].Offset, recs[1].Offset)
		}
		resp, err := p.Fetch(ctx, addr, FetchRequest{Topic: "t", Partition: i, Epoch: 3, Offset: uint64(i)})
		if err != nil || resp.Epoch != 3 || resp.Committed != uint64(i+1) || len(resp.Records) != 1 || string(resp.Records[0].Payload) != "p" {
			t.Fatalf("fetch %d: %+v, %v", i, resp, err)
		}
		if _, err := p.Fetch(ctx, addr, FetchRequest{Topic: "t", Offset: 99}); !errors.Is(err, refusal.ErrStaleEpoch) {
			t.Fatalf("refused fetch: %v, want a stale epoch", err)
		}
	}
	if open, grpcConn := framedOpen(p, addr); open != 1 || grpcConn {
		t.Fatalf("framed connections %d, a gRPC connection %v; want 1 and none", open, grpcConn)
	}
	if n := f.calls.Load(); n != 9 {
		t.Fatalf("handler served %d calls, want 9", n)
	}
}

// Calls at once each get a connection of their own, none waiting for
// another's answer, up to the node's bound; calls beyond it go through
// gRPC instead of opening more. Every connection opened stays for later
// calls.
func TestConcurrentCallsGetConnectionsOfTheirOwn(t *testing.T) {
	for _, c := range []struct{ calls, bound, framed int }{{8, 0, 8}, {6, 2, 2}} {
		var entered atomic.Int64
		all := make(chan struct{})
		f := &fake{commit: func(ctx context.Context, _ string, _ uint64, _ int, _ []storage.Record, _ uint64) error {
			if entered.Add(1) == int64(c.calls) {
				close(all)
			}
			select {
			case <-all: // every call is in its handler at once
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}}
		addr, _ := startServer(t, f)
		p := testPool(t, testSecret)
		p.framed.max = c.bound // 0: maxFramedPerNode
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var wg sync.WaitGroup
		for range c.calls {
			wg.Go(func() {
				if err := p.Commit(ctx, addr, "t", 0, 0, nil, 0); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		cancel()
		open, grpcConn := framedOpen(p, addr)
		p.framed.mu.Lock()
		idle, count := len(p.framed.idle[addr]), p.framed.count[addr]
		p.framed.mu.Unlock()
		if open != c.framed || idle != c.framed || count != c.framed || grpcConn != (c.framed < c.calls) {
			t.Fatalf("%d calls, bound %d: open %d, idle %d, counted %d, a gRPC connection %v; want %d framed",
				c.calls, c.bound, open, idle, count, grpcConn, c.framed)
		}
	}
}

// A node of a release before framed connections hands the opening to
// gRPC, which cannot read it: the caller calls it through gRPC, and asks
// again after streamRetryOld.
func TestANodeWithoutFramedConnectionsIsCalledThroughGRPC(t *testing.T) {
	f := &fake{fetch: func(_ context.Context, req FetchRequest) (FetchResponse, error) {
		return FetchResponse{Committed: req.Offset}, nil
	}}
	addr, _ := startServer(t, f, beforeFramed)
	p := testPool(t, testSecret)
	ctx := context.Background()
	recs := []storage.Record{{Payload: []byte("x")}}
	if err := p.Commit(ctx, addr, "t", 0, 0, recs, 0); err != nil {
		t.Fatal(err)
	}
	if resp, err := p.Fetch(ctx, addr, FetchRequest{Topic: "t", Offset: 5}); err != nil || resp.Committed != 5 {
		t.Fatalf("fetch: %+v, %v", resp, err)
	}
	if open, grpcConn := framedOpen(p, addr); open != 0 || !grpcConn {
		t.Fatalf("framed connections %d, a gRPC connection %v; want 0 and one", open, grpcConn)
	}
	if c, dial, _ := p.framed.take(addr, time.Now()); c != nil || dial {
		t.Error("the node without framed connections is not remembered as such")
	}
	if _, dial, _ := p.framed.take(addr, time.Now().Add(streamRetryOld)); !dial {
		t.Error("the node without framed connections is never asked again")
	}
}

// rawFramed opens a framed connection by hand, past the handshake and
// the opening, for frames no Pool would send.
func rawFramed(t *testing.T, p *Pool, addr string) net.Conn {
	t.Helper()
	c, err := p.door.DialContext(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	proof := secretProof(testSecret)
	for _, say := range [][]byte{[]byte(framedHello), proof[:]} {
		if _, err := c.Write(say); err != nil {
			t.Fatal(err)
		}
		var answer [len(framedHello)]byte
		if _, err := io.ReadFull(c, answer[:]); err != nil || string(answer[:]) != framedHello {
			t.Fatalf("opening answered %q, %v", answer, err)
		}
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// An operation the server does not know is answered 501 (a newer caller
// against an older node fails cleanly), an undecodable request 400, and
// neither reaches the handler; a frame over the size limit ends the
// connection before anything is allocated for it.
func TestFramedServerRefusesWhatItCannotServe(t *testing.T) {
	f := &fake{}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	c := rawFramed(t, p, addr)
	fr, fw := newFrameReader(c), &frameWriter{w: c}
	for _, tc := range []struct {
		op   byte
		msg  []byte
		want int
	}{{9, nil, http.StatusNotImplemented}, {opCommit, []byte{0xff, 0xff, 0xff}, http.StatusBadRequest},
		{opFetch, []byte{0xff, 0xff, 0xff}, http.StatusBadRequest}, {opForward, []byte{0xff, 0xff, 0xff}, http.StatusBadRequest}} {
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(tc.msg)))
		frame = append(frame, tc.op, 0, 0, 0, 100)
		if _, err := c.Write(append(frame, tc.msg...)); err != nil {
			t.Fatal(err)
		}
		ans, err := fr.read()
		if err != nil || ans.kind != answerError {
			t.Fatalf("op %d: answer kind %d, %v", tc.op, ans.kind, err)
		}
		e := &nodepb.Error{}
		if err := unmarshalTest(ans.msg, e); err != nil || int(e.GetStatus()) != tc.want {
			t.Fatalf("op %d: answered %+v, want %d", tc.op, e, tc.want)
		}
	}
	if err := fw.write(opCommit, 1000, &nodepb.CommitRequest{Topic: "fine"}); err != nil {
		t.Fatal(err)
	}
	if ans, err := fr.read(); err != nil || ans.kind != answerOK {
		t.Fatalf("a good request after refused ones: kind %d, %v", ans.kind, err)
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("handler called %d times, want 1 (the good request)", n)
	}
	huge := binary.BigEndian.AppendUint32(nil, maxFrameBytes+1)
	if _, err := c.Write(append(huge, opCommit, 0, 0, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the server kept a connection that announced an oversized frame")
	}
}

// The frame reader refuses a frame over the limit and a frame cut short;
// it reads back what the writer wrote.
func TestFrameReaderAndWriter(t *testing.T) {
	var b bytes.Buffer
	fw := &frameWriter{w: &b}
	in := &nodepb.CommitRequest{Topic: "orders", Partition: 3}
	if err := fw.write(opCommit, 1234, in); err != nil {
		t.Fatal(err)
	}
	whole := append([]byte(nil), b.Bytes()...)
	fr := &frameReader{r: bufioOf(whole)}
	f, err := fr.read()
	out := &nodepb.CommitRequest{}
	if err != nil || f.kind != opCommit || f.aux != 1234 || unmarshalTest(f.msg, out) != nil || out.GetTopic() != "orders" || out.GetPartition() != 3 {
		t.Fatalf("read back kind %d aux %d %+v, %v", f.kind, f.aux, out, err)
	}
	if _, err := (&frameReader{r: bufioOf(whole[:len(whole)-1])}).read(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a frame cut short: %v", err)
	}
	big := binary.BigEndian.AppendUint32(nil, maxFrameBytes+1)
	if _, err := (&frameReader{r: bufioOf(append(big, 1, 0, 0, 0, 0))}).read(); !errors.Is(err, errFrameTooBig) {
		t.Fatalf("an oversized frame: %v", err)
	}
}

// A caller presenting another secret past the handshake is refused at
// the opening, 401, and the handler never runs.
func TestFramedOpeningChecksTheSecret(t *testing.T) {
	f := &fake{}
	addr, _ := startServer(t, f)
	p := insiderPool(t, "not-the-secret")
	ae := asAPIErr(t, p.Commit(context.Background(), addr, "t", 0, 0, nil, 0))
	if ae.Status != http.StatusUnauthorized || !strings.Contains(ae.Message, "cluster secret refused") {
		t.Fatalf("got %+v", ae)
	}
	if open, grpcConn := framedOpen(p, addr); open != 0 || grpcConn {
		t.Fatalf("framed connections %d, gRPC %v after a refused opening", open, grpcConn)
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("handler called %d times", n)
	}
}

// FuzzFrameReader: any bytes give frames or an error, never a panic, and
// never a frame over the limit.
func FuzzFrameReader(f *testing.F) {
	var b bytes.Buffer
	(&frameWriter{w: &b}).write(opFetch, 7, &nodepb.FetchRequest{Topic: "t"})
	f.Add(b.Bytes())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := &frameReader{r: bufioOf(data)}
		for range 4 {
			fr, err := fr.read()
			if err != nil {
				return
			}
			if len(fr.msg) > maxFrameBytes {
				t.Fatalf("a frame of %d bytes", len(fr.msg))
			}
		}
	})
}

func bufioOf(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

func unmarshalTest(b []byte, m proto.Message) error { return proto.Unmarshal(b, m) }

// testTLS returns a mutual-TLS server and client configuration whose
// certificates come from a fresh CA named name.
func testTLS(t *testing.T, name string) (server, client *tls.Config) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	server = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS13}
	client = &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS13}
	return server, client
}

// With cluster TLS, framed connections run it inside the opening: calls
// work between nodes of one CA, without gRPC, and a caller whose
// certificate comes from another CA is a 503 that never reaches the
// handler.
func TestFramedCallsOverMutualTLS(t *testing.T) {
	serverTLS, clientTLS := testTLS(t, "cluster")
	f := &fake{}
	addr, _ := startServer(t, f, WithTLS(serverTLS))
	p := NewTLSPool(testSecret, clientTLS)
	t.Cleanup(func() { p.Close() })
	if err := p.Commit(context.Background(), addr, "t", 0, 0, nil, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Fetch(context.Background(), addr, FetchRequest{Topic: "t"}); err != nil {
		t.Fatal(err)
	}
	if open, grpcConn := framedOpen(p, addr); open != 1 || grpcConn {
		t.Fatalf("framed connections %d, a gRPC connection %v; want 1 and none", open, grpcConn)
	}
	_, rogueTLS := testTLS(t, "rogue")
	rogue := NewTLSPool(testSecret, rogueTLS)
	t.Cleanup(func() { rogue.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ae := asAPIErr(t, rogue.Commit(ctx, addr, "t", 0, 0, nil, 0)); ae.Status != http.StatusServiceUnavailable {
		t.Fatalf("a certificate from another CA: %+v, want a 503", ae)
	}
	if n := f.calls.Load(); n != 2 {
		t.Fatalf("handler called %d times, want 2", n)
	}
}
