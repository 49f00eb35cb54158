package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// AccessKey is one AWS-style access key of a user (docs/security.md,
// "Access keys and AWS signatures"). The secret is kept only sealed: the
// node that created the key encrypted it before proposing the command
// (package auth), so neither the Raft log, a snapshot nor this record
// ever holds it in clear. The FSM never seals, unseals or draws a random
// number: the command carries the finished key.
type AccessKey struct {
	ID        string `json:"id"`
	CreatedAt int64  `json:"created_at"`
	// Sealed is the secret encrypted with the cluster's access-key
	// sealing key, the key ID bound in as associated data.
	Sealed []byte `json:"sealed_secret"`
}

// MaxAccessKeys is how many access keys a user may hold at once, as many
// as AWS allows an IAM user: one in use and one being rotated in.
const MaxAccessKeys = 2

// Access key IDs: AccessKeyIDPrefix and 16 characters of [A-Z2-7], 20 in
// all like AWS's ("AKIA..."), so SDKs and tools that check the shape take
// them.
const (
	AccessKeyIDPrefix = "NKIA"
	AccessKeyIDLen    = 20
	accessKeyIDChars  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
)

// CheckAccessKeyID reports why id is not an access key ID.
func CheckAccessKeyID(id string) error {
	if len(id) != AccessKeyIDLen || !strings.HasPrefix(id, AccessKeyIDPrefix) ||
		strings.Trim(id[len(AccessKeyIDPrefix):], accessKeyIDChars) != "" {
		return fmt.Errorf("access key id %q: want %s and %d of [A-Z2-7]", id, AccessKeyIDPrefix, AccessKeyIDLen-len(AccessKeyIDPrefix))
	}
	return nil
}

// AccessKey returns the key id of u and whether u holds it.
func (u User) AccessKey(id string) (AccessKey, bool) {
	for _, k := range u.AccessKeys {
		if k.ID == id {
			return k, true
		}
	}
	return AccessKey{}, false
}

// AddAccessKeyCmd adds a key to a user: ErrNotFound without the user,
// ErrConflict when it holds MaxAccessKeys already, ErrExists when any
// user holds the ID.
type AddAccessKeyCmd struct {
	Name string    `json:"name"`
	Key  AccessKey `json:"key"`
}

// DeleteAccessKeyCmd removes a user's key (ErrNotFound if it holds none
// of that ID).
type DeleteAccessKeyCmd struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

func checkAccessKey(name string, k AccessKey) error {
	if err := CheckAccessKeyID(k.ID); err != nil {
		return invalidf("user %q: %v", name, err)
	}
	if len(k.Sealed) == 0 {
		return invalidf("user %q: access key %s without a sealed secret", name, k.ID)
	}
	return nil
}

func applyAddAccessKey(a *applyTx, payload json.RawMessage) error {
	var c AddAccessKeyCmd
	if err := decodePayload(OpAddAccessKey, payload, &c); err != nil {
		return err
	}
	if err := checkAccessKey(c.Name, c.Key); err != nil {
		return err
	}
	u, err := a.existingUser(c.Name)
	if err != nil {
		return err
	}
	if len(u.AccessKeys) >= MaxAccessKeys {
		return fmt.Errorf("meta: user %q holds %d access keys already: %w", c.Name, len(u.AccessKeys), ErrConflict)
	}
	// IDs are random (80 bits), so a clash is a bug or a replayed
	// command; either way a key ID names one key in the whole cluster.
	taken := false
	err = a.tx.Bucket(bucketUsers).ForEach(func(k, _ []byte) error {
		other, _, err := readUser(a.tx, string(k))
		if _, ok := other.AccessKey(c.Key.ID); ok {
			taken = true
		}
		return err
	})
	if err != nil {
		return err
	}
	if taken {
		return fmt.Errorf("meta: access key %s: %w", c.Key.ID, ErrExists)
	}
	u.AccessKeys = append(u.AccessKeys, c.Key)
	return a.putUser(u)
}

func applyDeleteAccessKey(a *applyTx, payload json.RawMessage) error {
	var c DeleteAccessKeyCmd
	if err := decodePayload(OpDeleteAccessKey, payload, &c); err != nil {
		return err
	}
	u, err := a.existingUser(c.Name)
	if err != nil {
		return err
	}
	kept := make([]AccessKey, 0, len(u.AccessKeys))
	for _, k := range u.AccessKeys {
		if k.ID != c.ID {
			kept = append(kept, k)
		}
	}
	if len(kept) == len(u.AccessKeys) {
		return fmt.Errorf("meta: user %q: access key %s: %w", c.Name, c.ID, ErrNotFound)
	}
	if len(kept) == 0 {
		kept = nil // the record reads as one written before keys existed
	}
	u.AccessKeys = kept
	return a.putUser(u)
}

// AddAccessKey adds k, its secret sealed already, to the user name.
func (s *Store) AddAccessKey(ctx context.Context, name string, k AccessKey) error {
	return s.propose(ctx, OpAddAccessKey, AddAccessKeyCmd{Name: name, Key: k})
}

// DeleteAccessKey removes the key id from the user name.
func (s *Store) DeleteAccessKey(ctx context.Context, name, id string) error {
	return s.propose(ctx, OpDeleteAccessKey, DeleteAccessKeyCmd{Name: name, ID: id})
}
