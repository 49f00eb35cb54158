package client

import (
	"errors"
	"reflect"
	"testing"
)

func TestCreateUser(t *testing.T) {
	c, f := newFake(t, reply{status: 201, body: `{"username":"bob","grants":[{"action":"produce","patterns":["orders-*"]},{"action":"consume","patterns":["a","b.*"]}]}`})
	got, err := c.CreateUser(ctx, CreateUserRequest{Username: "bob", Password: "s3cret-pw", Grants: []Grant{
		{Action: ActionProduce, Patterns: []string{"orders-*"}},
		{Action: ActionConsume, Patterns: []string{"a", "b.*"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "POST", Path: "/v1/users", ContentType: "application/json",
		Body: `{"username":"bob","password":"s3cret-pw","grants":[{"action":"produce","patterns":["orders-*"]},{"action":"consume","patterns":["a","b.*"]}]}`})
	want := User{Username: "bob", Grants: []Grant{{"produce", []string{"orders-*"}}, {"consume", []string{"a", "b.*"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}

func TestNoGrantsAreSentAsAnEmptyList(t *testing.T) {
	// The server refuses a null grants list on PUT; [] is how "none" is said.
	c, f := newFake(t, reply{status: 201, body: `{"username":"bob","grants":[]}`}, reply{status: 200, body: `{"username":"bob","grants":[]}`})
	if _, err := c.CreateUser(ctx, CreateUserRequest{Username: "bob", Password: "pw"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetGrants(ctx, "bob", nil); err != nil {
		t.Fatal(err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/users", Body: `{"username":"bob","password":"pw","grants":[]}`},
		seen{Method: "PUT", Path: "/v1/users/bob/grants", ContentType: "application/json", Body: `{"grants":[]}`},
	)
}

func TestListAndGetUsers(t *testing.T) {
	c, f := newFake(t,
		reply{status: 200, body: `{"users":[{"username":"admin","grants":[{"action":"admin","patterns":["*"]}]},{"username":"bob","grants":[]}]}`},
		reply{status: 200, body: `{"username":"a b","grants":[{"action":"create","patterns":["x"]}]}`},
	)
	users, err := c.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []User{{Username: "admin", Grants: []Grant{{"admin", []string{"*"}}}}, {Username: "bob", Grants: []Grant{}}}
	if !reflect.DeepEqual(users, want) {
		t.Errorf("list %+v, want %+v", users, want)
	}
	u, err := c.GetUser(ctx, "a b")
	if err != nil || u.Username != "a b" || len(u.Grants) != 1 || u.Grants[0].Action != "create" {
		t.Fatalf("get: %+v %v", u, err)
	}
	f.expect(seen{Method: "GET", Path: "/v1/users"}, seen{Method: "GET", Path: "/v1/users/a%20b"})
}

func TestSetGrants(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"username":"bob","grants":[{"action":"admin","patterns":["team-*"]}]}`})
	u, err := c.SetGrants(ctx, "bob", []Grant{{Action: ActionAdmin, Patterns: []string{"team-*"}}})
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "PUT", Path: "/v1/users/bob/grants", Body: `{"grants":[{"action":"admin","patterns":["team-*"]}]}`})
	if len(u.Grants) != 1 || u.Grants[0].Patterns[0] != "team-*" {
		t.Errorf("decoded %+v", u)
	}
}

func TestSetPasswordSendsCurrentOnlyWhenGiven(t *testing.T) {
	c, f := newFake(t, reply{status: 204})
	if err := c.SetPassword(ctx, "alice", "new-password", "old-password"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetPassword(ctx, "b/c", "reset-password", ""); err != nil {
		t.Fatal(err)
	}
	f.expect(
		seen{Method: "PUT", Path: "/v1/users/alice/password", ContentType: "application/json",
			Body: `{"password":"new-password","current_password":"old-password"}`},
		seen{Method: "PUT", Path: "/v1/users/b%2Fc/password", Body: `{"password":"reset-password"}`},
	)
}

func TestDeleteUser(t *testing.T) {
	c, f := newFake(t, reply{status: 204})
	if err := c.DeleteUser(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "DELETE", Path: "/v1/users/bob"})
}

func TestUserErrorsAreAPIErrors(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 409} {
		c, _ := newFake(t, reply{status: status, body: `{"error":"no"}`})
		_, err := c.CreateUser(ctx, CreateUserRequest{Username: "bob", Password: "pw"})
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != status || apiErr.Message != "no" {
			t.Errorf("status %d: got %#v", status, err)
		}
	}
}

func TestEmptyUserNamesNeverReachTheServer(t *testing.T) {
	c, f := newFake(t)
	if _, err := c.CreateUser(ctx, CreateUserRequest{Password: "pw"}); !errors.Is(err, errEmptyUser) {
		t.Errorf("CreateUser: %v", err)
	}
	if _, err := c.GetUser(ctx, ""); !errors.Is(err, errEmptyUser) {
		t.Errorf("GetUser: %v", err)
	}
	if _, err := c.SetGrants(ctx, "", nil); !errors.Is(err, errEmptyUser) {
		t.Errorf("SetGrants: %v", err)
	}
	if err := c.SetPassword(ctx, "", "pw", ""); !errors.Is(err, errEmptyUser) {
		t.Errorf("SetPassword: %v", err)
	}
	if err := c.DeleteUser(ctx, ""); !errors.Is(err, errEmptyUser) {
		t.Errorf("DeleteUser: %v", err)
	}
	f.expect()
}
