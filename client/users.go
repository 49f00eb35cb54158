package client

import (
	"context"
	"errors"
	"net/http"
)

// The grant actions (docs/security.md). Admin implies every other action.
const (
	ActionProduce = "produce"
	ActionConsume = "consume"
	ActionCreate  = "create"
	ActionAdmin   = "admin"
)

// Grant allows Action on every topic matching one of Patterns: an exact
// topic name, or a prefix ending in "*".
type Grant struct {
	Action   string   `json:"action"`
	Patterns []string `json:"patterns"`
}

// User is an account as the server shows it; the password never comes
// back.
//
// Limits are the rate limits in force for it on the node that answered;
// LimitsFromDefaults names those that are that node's defaults (it has
// none of its own for them). Both are absent (nil) from a server without
// rate limits.
type User struct {
	Username           string   `json:"username"`
	Grants             []Grant  `json:"grants"`
	Limits             *Limits  `json:"limits,omitempty"`
	LimitsFromDefaults []string `json:"limits_from_defaults,omitempty"`
}

// CreateUserRequest is POST /v1/users.
// Limits, when not nil, are the user's own rate limits (OwnLimits).
type CreateUserRequest struct {
	Username string     `json:"username"`
	Password string     `json:"password"`
	Grants   []Grant    `json:"grants"`
	Limits   *OwnLimits `json:"limits,omitempty"`
}

var errEmptyUser = errors.New("user name must not be empty")

// userPath escapes name so "a/b" stays one segment and the server answers
// with its own validation message rather than a routing 404.
func userPath(name string, rest ...string) string {
	return namedPath("/v1/users/", name, rest)
}

// nonNilGrants makes "no grants" go out as [] rather than null: the server
// reads a missing or null grants list as a mistake, and [] as "none".
func nonNilGrants(gs []Grant) []Grant {
	if gs == nil {
		return []Grant{}
	}
	return gs
}

// CreateUser creates an account: POST /v1/users, 201 with the user.
func (c *Client) CreateUser(ctx context.Context, req CreateUserRequest) (User, error) {
	if req.Username == "" {
		return User{}, errEmptyUser
	}
	req.Grants = nonNilGrants(req.Grants)
	var u User
	_, err := c.doJSON(ctx, http.MethodPost, "/v1/users", nil, req, &u)
	return u, err
}

// ListUsers returns every account the caller may see (an admin sees the
// users whose grants it holds itself).
func (c *Client) ListUsers(ctx context.Context) ([]User, error) {
	var out struct {
		Users []User `json:"users"`
	}
	if _, err := c.doJSON(ctx, http.MethodGet, "/v1/users", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Users, nil
}

// GetUser returns one account: GET /v1/users/{name}.
func (c *Client) GetUser(ctx context.Context, name string) (User, error) {
	if name == "" {
		return User{}, errEmptyUser
	}
	var u User
	_, err := c.doJSON(ctx, http.MethodGet, userPath(name), nil, nil, &u)
	return u, err
}

// SetGrants replaces a user's grants: PUT /v1/users/{name}/grants, 200 with
// the user. Empty grants remove every grant.
func (c *Client) SetGrants(ctx context.Context, name string, grants []Grant) (User, error) {
	if name == "" {
		return User{}, errEmptyUser
	}
	body := struct {
		Grants []Grant `json:"grants"`
	}{nonNilGrants(grants)}
	var u User
	_, err := c.doJSON(ctx, http.MethodPut, userPath(name, "grants"), nil, body, &u)
	return u, err
}

// SetPassword changes a password: PUT /v1/users/{name}/password, 204. A
// user changing its own password proves it with current; an admin
// resetting someone else's leaves current empty, and it is not sent.
func (c *Client) SetPassword(ctx context.Context, name, password, current string) error {
	if name == "" {
		return errEmptyUser
	}
	body := struct {
		Password        string `json:"password"`
		CurrentPassword string `json:"current_password,omitempty"`
	}{password, current}
	_, err := c.doJSON(ctx, http.MethodPut, userPath(name, "password"), nil, body, nil)
	return err
}

// DeleteUser removes an account: DELETE /v1/users/{name}, 204.
func (c *Client) DeleteUser(ctx context.Context, name string) error {
	if name == "" {
		return errEmptyUser
	}
	_, err := c.doJSON(ctx, http.MethodDelete, userPath(name), nil, nil, nil)
	return err
}
