package client

import (
	"errors"
	"reflect"
	"testing"
)

func TestAccessKeys(t *testing.T) {
	c, f := newFake(t,
		reply{status: 201, body: `{"access_key_id":"NKIAJ7Q3XW2LM4ZR5T6Y","secret_access_key":"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY","created_at":1700000000}`},
		reply{status: 200, body: `{"access_keys":[{"access_key_id":"NKIAJ7Q3XW2LM4ZR5T6Y","created_at":1700000000}]}`},
		reply{status: 204},
	)
	k, err := c.CreateAccessKey(ctx, "a b")
	if err != nil {
		t.Fatal(err)
	}
	if want := (NewAccessKey{AccessKeyID: "NKIAJ7Q3XW2LM4ZR5T6Y", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", CreatedAt: 1700000000}); k != want {
		t.Errorf("created %+v, want %+v", k, want)
	}
	keys, err := c.ListAccessKeys(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if want := []AccessKey{{AccessKeyID: "NKIAJ7Q3XW2LM4ZR5T6Y", CreatedAt: 1700000000}}; !reflect.DeepEqual(keys, want) {
		t.Errorf("listed %+v, want %+v", keys, want)
	}
	if err := c.DeleteAccessKey(ctx, "alice", "NKIAJ7Q3XW2LM4ZR5T6Y"); err != nil {
		t.Fatal(err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/users/a%20b/access-keys"},
		seen{Method: "GET", Path: "/v1/users/alice/access-keys"},
		seen{Method: "DELETE", Path: "/v1/users/alice/access-keys/NKIAJ7Q3XW2LM4ZR5T6Y"},
	)
}

func TestAccessKeyErrors(t *testing.T) {
	c, _ := newFake(t, reply{status: 409, body: `{"error":"two keys already"}`})
	_, err := c.CreateAccessKey(ctx, "alice")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Message != "two keys already" {
		t.Fatalf("got %#v", err)
	}
	c, f := newFake(t)
	if _, err := c.CreateAccessKey(ctx, ""); !errors.Is(err, errEmptyUser) {
		t.Errorf("CreateAccessKey: %v", err)
	}
	if _, err := c.ListAccessKeys(ctx, ""); !errors.Is(err, errEmptyUser) {
		t.Errorf("ListAccessKeys: %v", err)
	}
	if err := c.DeleteAccessKey(ctx, "alice", ""); !errors.Is(err, errEmptyKeyID) {
		t.Errorf("DeleteAccessKey: %v", err)
	}
	f.expect()
}
