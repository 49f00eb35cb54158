package peerauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"net"
)

// The handshake, all fixed sizes:
//
//	dialer   → listener  greeting "NRS1" | nonceD (32)
//	listener → dialer    nonceL (32) | HMAC(k, "listener" | nonceD | nonceL)
//	dialer   → listener  HMAC(k, "dialer" | nonceD | nonceL)
//
// The listener proves itself first, so a dialer never sends its proof to
// a stranger's port; it learns nothing it can use, since the roles are in
// what is signed.
const (
	greeting  = "NRS1"
	nonceSize = 32
	macSize   = sha256.Size
	keyLabel  = "narad cluster port v1 "
)

// Refusal reasons, the label values of the refused-connections metric.
const (
	ReasonGreeting = "bad_greeting" // not our protocol, or an old peer
	ReasonProof    = "bad_proof"    // our protocol, a different secret
	ReasonTLS      = "tls"          // TLS handshake or certificate failed
	ReasonTimeout  = "timeout"      // silent or too slow
	ReasonBusy     = "busy"         // too many handshakes already pending
)

var (
	errGreeting = errors.New("peerauth: peer did not greet with the Narad Raft stream protocol")
	errProof    = errors.New("peerauth: peer's proof does not match the cluster secret")
)

// DeriveKey turns the cluster secret into plane's handshake key.
func DeriveKey(secret []byte, plane string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(keyLabel + plane))
	return m.Sum(nil)
}

func proof(key []byte, role string, nonceD, nonceL []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(role))
	m.Write(nonceD)
	m.Write(nonceL)
	return m.Sum(nil)
}

func nonce() ([]byte, error) {
	b := make([]byte, nonceSize)
	_, err := rand.Read(b)
	return b, err
}

// dialerSide runs the dialer's half over conn.
func dialerSide(conn net.Conn, key []byte) error {
	nd, err := nonce()
	if err != nil {
		return err
	}
	if _, err := conn.Write(append([]byte(greeting), nd...)); err != nil {
		return err
	}
	var reply [nonceSize + macSize]byte
	if _, err := io.ReadFull(conn, reply[:]); err != nil {
		return err
	}
	nl, mac := reply[:nonceSize], reply[nonceSize:]
	if !hmac.Equal(mac, proof(key, "listener", nd, nl)) {
		return errProof
	}
	_, err = conn.Write(proof(key, "dialer", nd, nl))
	return err
}

// listenerSide runs the listener's half over conn. A failure before a
// well-formed greeting is a stranger (ReasonGreeting); after it, a peer of
// our protocol with another key, which hangs up on our proof or sends a
// wrong one (ReasonProof). Timeouts are classified by the caller.
func listenerSide(conn net.Conn, key []byte) (string, error) {
	var hello [len(greeting) + nonceSize]byte
	if _, err := io.ReadFull(conn, hello[:]); err != nil {
		return ReasonGreeting, err
	}
	if string(hello[:len(greeting)]) != greeting {
		return ReasonGreeting, errGreeting
	}
	nd := hello[len(greeting):]
	nl, err := nonce()
	if err != nil {
		return ReasonProof, err
	}
	if _, err := conn.Write(append(nl, proof(key, "listener", nd, nl)...)); err != nil {
		return ReasonProof, err
	}
	var mac [macSize]byte
	if _, err := io.ReadFull(conn, mac[:]); err != nil {
		return ReasonProof, err
	}
	if !hmac.Equal(mac[:], proof(key, "dialer", nd, nl)) {
		return ReasonProof, errProof
	}
	return "", nil
}
