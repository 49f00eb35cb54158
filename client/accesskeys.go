package client

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// AccessKey is a user's AWS-style access key as the server lists it: the
// secret never comes back after creation.
type AccessKey struct {
	AccessKeyID string `json:"access_key_id"`
	CreatedAt   int64  `json:"created_at"` // unix seconds
}

// NewAccessKey is a key just created, with its secret: the server shows
// the secret this once, so keep it.
type NewAccessKey struct {
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
	CreatedAt       int64  `json:"created_at"` // unix seconds
}

var errEmptyKeyID = errors.New("access key id must not be empty")

// CreateAccessKey gives a user a new access key, to sign requests to the
// SQS/SNS edge with: POST /v1/users/{name}/access-keys, 201 with the key
// and its secret. A user holds at most two (409 for a third).
func (c *Client) CreateAccessKey(ctx context.Context, name string) (NewAccessKey, error) {
	if name == "" {
		return NewAccessKey{}, errEmptyUser
	}
	var k NewAccessKey
	_, err := c.doJSON(ctx, http.MethodPost, userPath(name, "access-keys"), nil, nil, &k)
	return k, err
}

// ListAccessKeys returns a user's access keys, oldest first, without
// their secrets: GET /v1/users/{name}/access-keys.
func (c *Client) ListAccessKeys(ctx context.Context, name string) ([]AccessKey, error) {
	if name == "" {
		return nil, errEmptyUser
	}
	var out struct {
		AccessKeys []AccessKey `json:"access_keys"`
	}
	if _, err := c.doJSON(ctx, http.MethodGet, userPath(name, "access-keys"), nil, nil, &out); err != nil {
		return nil, err
	}
	return out.AccessKeys, nil
}

// DeleteAccessKey revokes a user's access key:
// DELETE /v1/users/{name}/access-keys/{id}, 204.
func (c *Client) DeleteAccessKey(ctx context.Context, name, id string) error {
	if name == "" {
		return errEmptyUser
	}
	if id == "" {
		return errEmptyKeyID
	}
	_, err := c.doJSON(ctx, http.MethodDelete, userPath(name, "access-keys", url.PathEscape(id)), nil, nil, nil)
	return err
}
