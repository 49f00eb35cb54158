package auth

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

// Access keys (docs/security.md, "Access keys and AWS signatures"): an
// AWS-style key ID and secret a user signs requests to the SQS/SNS edge
// with (sigv4.go). The node must compute the same HMAC as the client, so
// the secret is kept retrievable — sealed, never in clear: the node that
// creates a key seals its secret (Sealer) before proposing it, and only
// the sealed bytes reach the Raft log, snapshots and the user's record.

// AccessKeyView is an access key as the API lists it: never its secret.
type AccessKeyView struct {
	AccessKeyID string `json:"access_key_id"`
	CreatedAt   int64  `json:"created_at"`
}

// NewAccessKey is a key just created, with its secret: the only answer
// that ever shows it.
type NewAccessKey struct {
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
	CreatedAt       int64  `json:"created_at"`
}

// KeyStore is the access-keys side of the metastore (meta.Store).
type KeyStore interface {
	AddAccessKey(ctx context.Context, name string, k meta.AccessKey) error
	DeleteAccessKey(ctx context.Context, name, id string) error
}

// SealAccessKeys turns on access keys: their secrets are sealed with s,
// and the Manager's store must also be a KeyStore. Without it the
// access-key calls are refused as unavailable.
func (m *Manager) SealAccessKeys(s *Sealer) *Manager {
	m.sealer = s
	return m
}

func (m *Manager) keyStore() (KeyStore, error) {
	ks, ok := m.store.(KeyStore)
	if !ok || m.sealer == nil {
		return nil, refusal.New(refusal.ErrUnavailable, 0, "access keys are not available on this node")
	}
	return ks, nil
}

// keyTarget reads the user whose keys an operation manages: itself, or
// one the actor may manage — the rule of SetPassword (an admin covering
// the user's grants), so whoever may set a user's password may also
// give it keys.
func (m *Manager) keyTarget(actor Principal, name string) (meta.User, error) {
	if u, ok := m.store.User(name); ok && name == actor.Name {
		return u, nil
	}
	return m.target(actor, name, false)
}

// CreateAccessKey gives the user name a new access key and answers its
// secret, this once. A user holds at most meta.MaxAccessKeys.
func (m *Manager) CreateAccessKey(ctx context.Context, actor Principal, name string) (NewAccessKey, error) {
	ks, err := m.keyStore()
	if err != nil {
		return NewAccessKey{}, err
	}
	u, err := m.keyTarget(actor, name)
	if err != nil {
		return NewAccessKey{}, err
	}
	if len(u.AccessKeys) >= meta.MaxAccessKeys {
		return NewAccessKey{}, tooManyKeys(name)
	}
	k := NewAccessKey{AccessKeyID: newAccessKeyID(), SecretAccessKey: newSecretAccessKey(), CreatedAt: time.Now().Unix()}
	sealed, err := m.sealer.Seal(k.AccessKeyID, k.SecretAccessKey)
	if err != nil {
		return NewAccessKey{}, err
	}
	err = ks.AddAccessKey(ctx, name, meta.AccessKey{ID: k.AccessKeyID, CreatedAt: k.CreatedAt, Sealed: sealed})
	if errors.Is(err, meta.ErrConflict) {
		return NewAccessKey{}, tooManyKeys(name) // another key came first
	}
	if err != nil {
		return NewAccessKey{}, m.mapErr(err)
	}
	return k, nil
}

func tooManyKeys(name string) error {
	return refusal.New(refusal.ErrConflict, 0,
		"user %q holds %d access keys already, the most a user may hold: delete one before creating another", name, meta.MaxAccessKeys)
}

// ListAccessKeys lists the keys of the user name, oldest first, without
// their secrets.
func (m *Manager) ListAccessKeys(actor Principal, name string) ([]AccessKeyView, error) {
	u, err := m.keyTarget(actor, name)
	if err != nil {
		return nil, err
	}
	out := make([]AccessKeyView, 0, len(u.AccessKeys))
	for _, k := range u.AccessKeys {
		out = append(out, AccessKeyView{AccessKeyID: k.ID, CreatedAt: k.CreatedAt})
	}
	return out, nil
}

// DeleteAccessKey revokes the key id of the user name: a request signed
// with it is refused from the moment this node applies the change.
func (m *Manager) DeleteAccessKey(ctx context.Context, actor Principal, name, id string) error {
	ks, err := m.keyStore()
	if err != nil {
		return err
	}
	u, err := m.keyTarget(actor, name)
	if err != nil {
		return err
	}
	if _, ok := u.AccessKey(id); !ok {
		return refusal.New(refusal.ErrNotFound, 0, "user %q has no access key %q", name, id)
	}
	return m.mapErr(ks.DeleteAccessKey(ctx, name, id))
}

const secretAccessKeyChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+"

// SecretAccessKeyLen is the length of a secret, as AWS's.
const SecretAccessKeyLen = 40

// newAccessKeyID draws a key ID: meta.AccessKeyIDPrefix and 16 of
// [A-Z2-7] (80 bits). 32 divides 256: masking a random byte is unbiased.
func newAccessKeyID() string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	return meta.AccessKeyIDPrefix + randomOf(chars, meta.AccessKeyIDLen-len(meta.AccessKeyIDPrefix))
}

// newSecretAccessKey draws a secret: 40 of [A-Za-z0-9/+] (240 bits).
func newSecretAccessKey() string { return randomOf(secretAccessKeyChars, SecretAccessKeyLen) }

// randomOf draws n characters of chars, whose length is a power of two
// up to 256.
func randomOf(chars string, n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	for i := range b {
		b[i] = chars[int(b[i])&(len(chars)-1)]
	}
	return string(b)
}

// Sealer encrypts access key secrets at rest with AES-256-GCM. Its key is
// derived with HKDF-SHA256 from the cluster secret, so every node of a
// cluster (which must share one) unseals what any of them sealed; a node
// without a cluster secret (a single node) keeps a random key in a file
// instead, created on first need, mode 0600. The key ID is the
// associated data: a sealed secret copied to another key does not open.
type Sealer struct {
	clusterSecret []byte
	keyFile       string

	once sync.Once
	aead cipher.AEAD
	err  error
}

// sealInfo is HKDF's context: the sealing key is used for nothing else,
// and a future scheme gets another.
const sealInfo = "narad access-key sealing v1"

// sealVersion is the first byte of a sealed secret: the scheme, so that
// another may follow.
const sealVersion = 1

// NewSealer seals with a key derived from clusterSecret, or when it is
// empty with the key kept in keyFile (created on first use).
func NewSealer(clusterSecret []byte, keyFile string) *Sealer {
	return &Sealer{clusterSecret: clusterSecret, keyFile: keyFile}
}

func (s *Sealer) init() (cipher.AEAD, error) {
	s.once.Do(func() {
		var key []byte
		if len(s.clusterSecret) > 0 {
			key, s.err = hkdf.Key(sha256.New, s.clusterSecret, nil, sealInfo, 32)
		} else {
			key, s.err = loadOrCreateKey(s.keyFile)
		}
		if s.err != nil {
			return
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			s.err = err
			return
		}
		s.aead, s.err = cipher.NewGCM(block)
	})
	return s.aead, s.err
}

func sealAD(id string) []byte { return []byte("narad access key\x00" + id) }

// Seal encrypts secret as the secret of key id.
func (s *Sealer) Seal(id, secret string) ([]byte, error) {
	aead, err := s.init()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(secret)+aead.Overhead())
	out[0] = sealVersion
	rand.Read(out[1:]) // never fails (crypto/rand)
	return aead.Seal(out, out[1:], []byte(secret), sealAD(id)), nil
}

// Unseal opens what Seal sealed for the same key id.
func (s *Sealer) Unseal(id string, sealed []byte) (string, error) {
	aead, err := s.init()
	if err != nil {
		return "", err
	}
	n := aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return "", fmt.Errorf("access key %s: sealed secret of an unknown format", id)
	}
	plain, err := aead.Open(nil, sealed[1:1+n], sealed[1+n:], sealAD(id))
	if err != nil {
		return "", fmt.Errorf("access key %s: the secret does not unseal with this node's sealing key (another cluster secret?)", id)
	}
	return string(plain), nil
}

// loadOrCreateKey reads the 32-byte key in path, or creates it: written
// whole to a temporary file, then linked in place, so a crash leaves no
// short key and two racing creators agree on one.
func loadOrCreateKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createKeyFile(path); err != nil {
			return nil, err
		}
		key, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("access-key sealing key: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("access-key sealing key %s: want 32 bytes, got %d", path, len(key))
	}
	return key, nil
}

func createKeyFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand)
	_, err = tmp.Write(key)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// CreateTemp made it 0600. Link, not rename: an existing key is
	// never replaced.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
