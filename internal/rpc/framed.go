package rpc

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"

	"google.golang.org/protobuf/proto"
)

// Framed connections carry the data path's calls, Commit, Fetch and
// Forward, without gRPC: on the node port, after the peer
// handshake, a connection that opens with framedHello is served here, any
// other goes to gRPC. Each request and its answer is one length-prefixed
// frame around the calls' own protobuf messages, and a connection carries
// one call at a time, so a call is one write and one read on each side,
// with no HTTP/2 framing, flow control, headers or transport goroutines
// between the caller and the handler. gRPC's transport was about a fifth
// of the CPU of nodes replicating single-record produces, and a Commit of
// 8 records costs 87-98 µs of CPU through gRPC against 23 µs framed
// (BenchmarkCommitRoundTrip; docs/replication-performance.md, "The node
// transport: framed connections").
//
// The opening, after the peer handshake (peerauth), each step fixed size:
//
//	caller → server  framedHello
//	server → caller  framedHello
//	                 with cluster TLS, a TLS session from here on
//	caller → server  SHA-256("narad-secret " + secret)
//	server → caller  framedHello (accepted) or framedRefused, then close
//
// A server of a release before framed connections hands the opening to
// gRPC, which answers with HTTP/2 bytes or closes: the caller then uses
// gRPC for that node for streamRetryOld (framedpool.go). The secret's
// proof, like a gRPC call's metadata, crosses inside TLS when the
// cluster has it. Every frame after the opening is
//
//	length uint32 | kind byte | aux uint32 | length bytes of protobuf
//
// big-endian. A request's kind is its operation (opCommit, opFetch,
// opForward) and
// its aux the caller's budget in milliseconds, which the server applies
// as the handler's deadline, as gRPC carries a call's deadline. An
// answer's kind is answerOK (the response message) or answerError (an
// nodepb.Error, the refusal a gRPC call carries as its status detail).
const (
	framedHello   = "NRF1"
	framedRefused = "NRFX"

	opCommit  byte = 1
	opFetch   byte = 2
	opForward byte = 3

	answerOK    byte = 0
	answerError byte = 1

	frameHeaderSize = 4 + 1 + 4
	// maxFrameBytes bounds a frame's message as gRPC's MaxMessageBytes
	// bounds a call's.
	maxFrameBytes = MaxMessageBytes
)

// secretProof is what the opening presents: the hash of the same value a
// gRPC call carries as its authorization metadata, so the server compares
// it as it compares a call's (Server.want).
func secretProof(secret string) [sha256.Size]byte {
	return sha256.Sum256([]byte(authScheme + secret))
}

var errFrameTooBig = errors.New("rpc: frame larger than the message limit")

// frame is one decoded frame; msg aliases the reader's buffer until the
// next read.
type frame struct {
	kind byte
	aux  uint32
	msg  []byte
}

// frameReader reads frames from a connection into one reused buffer
// (proto.Unmarshal copies what it keeps, so the buffer is free again once
// a message is decoded).
type frameReader struct {
	r   *bufio.Reader
	buf []byte
}

func newFrameReader(c net.Conn) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(c, 16<<10)}
}

// read returns the next frame. A frame claiming more than maxFrameBytes
// is refused before anything is allocated for it.
func (fr *frameReader) read() (frame, error) {
	var h [frameHeaderSize]byte
	if _, err := io.ReadFull(fr.r, h[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(h[0:4])
	if n > maxFrameBytes {
		return frame{}, fmt.Errorf("%w: %d bytes", errFrameTooBig, n)
	}
	if cap(fr.buf) > 1<<20 {
		fr.buf = nil // the last frame was big: do not keep its buffer
	}
	if cap(fr.buf) < int(n) {
		fr.buf = make([]byte, n)
	}
	fr.buf = fr.buf[:n]
	if _, err := io.ReadFull(fr.r, fr.buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return frame{}, err
	}
	return frame{kind: h[4], aux: binary.BigEndian.Uint32(h[5:9]), msg: fr.buf}, nil
}

// frameWriter writes frames from one reused buffer, each with a single
// write.
type frameWriter struct {
	w   io.Writer
	buf []byte
}

// write marshals m behind a header and sends it.
func (fw *frameWriter) write(kind byte, aux uint32, m proto.Message) error {
	b := append(fw.buf[:0], make([]byte, frameHeaderSize)...)
	b, err := proto.MarshalOptions{}.MarshalAppend(b, m)
	if err != nil {
		return err
	}
	n := len(b) - frameHeaderSize
	if n > maxFrameBytes {
		return fmt.Errorf("%w: %d bytes", errFrameTooBig, n)
	}
	binary.BigEndian.PutUint32(b[0:4], uint32(n))
	b[4] = kind
	binary.BigEndian.PutUint32(b[5:9], aux)
	_, err = fw.w.Write(b)
	if cap(b) <= 1<<20 {
		fw.buf = b // keep a buffer for small frames; let a big one go
	} else {
		fw.buf = nil
	}
	return err
}
