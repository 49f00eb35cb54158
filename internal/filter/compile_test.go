package filter

import (
	"errors"
	"strings"
	"testing"
)

// TestCombinations counts as SNS's constraints page does: the product of
// each key's number of values, times the key's depth in the payload
// scope, with an $or adding its branches.
func TestCombinations(t *testing.T) {
	cases := []struct {
		policy string
		scope  Scope
		want   int
	}{
		{`{}`, Headers, 1},
		{`{"a":["1","2","3"],"b":["1"],"c":["1","2"]}`, Headers, 6},
		{`{"a":["1","2","3"],"b":["1"],"c":["1","2"]}`, Payload, 6},
		// Four values three deep, three values two deep: 3*4 * 2*3.
		{`{"a":{"b":{"c":["1","2","3","4"]}},"d":{"e":["1","2","3"]}}`, Payload, 72},
		// $or: the other keys times the branches' sum, (2*2)+(2*2).
		{`{"s":["1","2"],"$or":[{"m":["1","2"]},{"n":["1","2"]}]}`, Headers, 8},
		// A nested $or keeps its depth: 2 * (1*2 + 3*2).
		{`{"s":["1","2"],"o":{"$or":[{"m":["1"]},{"n":["1","2","3"]}]}}`, Payload, 16},
		// $or inside a branch.
		{`{"$or":[{"a":["1"]},{"$or":[{"b":["1","2"]},{"c":["1","2","3"]}]}]}`, Headers, 6},
		// Operators count one value each.
		{`{"a":[{"prefix":"x"},{"numeric":[">",0,"<",1]},{"anything-but":["a","b","c"]}]}`, Headers, 3},
		// Exactly the cap.
		{`{"a":["1","2","3","4","5"],"b":["1","2","3","4","5"],"c":["1","2","3","4","5","6"]}`, Headers, 150},
	}
	for _, c := range cases {
		f := mustCompile(t, c.policy, c.scope)
		if got := f.Combinations(); got != c.want {
			t.Errorf("%s (%s): %d combinations, want %d", c.policy, c.scope, got, c.want)
		}
	}
}

// TestCompileErrors checks each refusal names the place in the policy.
func TestCompileErrors(t *testing.T) {
	cases := []struct {
		policy string
		scope  Scope
		path   string // the error's Path
		says   string // a part of its message
	}{
		{`[]`, Headers, "filter", "want a JSON object"},
		{`"x"`, Payload, "filter", "want a JSON object"},
		{`{"a":["x"]`, Headers, "filter", "invalid JSON"},
		{`{"a":["x"]} {}`, Headers, "filter", "more after"},
		{`{"a":["x",]}`, Headers, "filter.a[1]", "invalid JSON"},
		{"{\"a\":[\"\xff\"]}", Headers, "filter", "UTF-8"},
		{`{"a":["x"],"a":["y"]}`, Headers, "filter.a", "twice"},
		{`{"a":"x"}`, Headers, "filter.a", "want an array of conditions, have a string"},
		{`{"a":5}`, Payload, "filter.a", "or an object"},
		{`{"a":[]}`, Headers, "filter.a", "empty array"},
		{`{"a":{}}`, Payload, "filter.a", "empty object"},
		{`{"a":{"b":["x"]}}`, Headers, "filter.a", "no nested object"},
		{`{"a":[["x"]]}`, Headers, "filter.a[0]", "have an array"},
		{`{"a":[{}]}`, Headers, "filter.a[0]", "exactly one operator"},
		{`{"a":[{"prefix":"x","suffix":"y"}]}`, Headers, "filter.a[0]", "exactly one operator"},
		{`{"a":[{"like":"x"}]}`, Headers, "filter.a[0].like", "unknown operator"},
		{`{"a":[{"prefix":5}]}`, Headers, "filter.a[0].prefix", "want a string"},
		{`{"a":[{"suffix":null}]}`, Headers, "filter.a[0].suffix", "want a string"},
		{`{"a":[{"equals-ignore-case":["x"]}]}`, Headers, "filter.a[0].equals-ignore-case", "want a string"},
		{`{"a":[{"exists":"true"}]}`, Headers, "filter.a[0].exists", "true or false"},
		{`{"a":[{"cidr":"10.0.0.0"}]}`, Headers, "filter.a[0].cidr", "CIDR"},
		{`{"a":[{"cidr":"10.0.0.0/33"}]}`, Headers, "filter.a[0].cidr", "CIDR"},
		{`{"a":[{"cidr":"10.0.0.1/24"}]}`, Headers, "filter.a[0].cidr", "10.0.0.0/24"},
		{`{"a":[{"cidr":"2001:db8::1/32"}]}`, Headers, "filter.a[0].cidr", "2001:db8::/32"},
		{`{"a":[{"anything-but":[]}]}`, Headers, "filter.a[0].anything-but", "empty array"},
		{`{"a":[{"anything-but":true}]}`, Headers, "filter.a[0].anything-but", "have a boolean"},
		{`{"a":[{"anything-but":["x",null]}]}`, Headers, "filter.a[0].anything-but[1]", "string or a number"},
		{`{"a":[{"anything-but":{"exists":true}}]}`, Headers, "filter.a[0].anything-but", "prefix"},
		{`{"a":[{"anything-but":{"prefix":1}}]}`, Headers, "filter.a[0].anything-but.prefix", "want a string"},
		{`{"a":[{"anything-but":[1e10]}]}`, Headers, "filter.a[0].anything-but[0]", "range"},
		{`{"store":[{"numeric":5}]}`, Headers, "filter.store[0].numeric", "have a number"},
		{`{"store":[{"numeric":[]}]}`, Headers, "filter.store[0].numeric", "have an array"},
		{`{"store":[{"numeric":["="]}]}`, Headers, "filter.store[0].numeric", "1 elements"},
		{`{"store":[{"numeric":["==",1]}]}`, Headers, "filter.store[0].numeric[0]", `"=="`},
		{`{"store":[{"numeric":[1,1]}]}`, Headers, "filter.store[0].numeric[0]", "have a number"},
		{`{"store":[{"numeric":["=","1"]}]}`, Headers, "filter.store[0].numeric[1]", "want a number"},
		{`{"store":[{"numeric":["<",5,">",1]}]}`, Headers, "filter.store[0].numeric[2]", "lower bound"},
		{`{"store":[{"numeric":["=",5,"<",10]}]}`, Headers, "filter.store[0].numeric[2]", "lower bound"},
		{`{"store":[{"numeric":[">",5,">",10]}]}`, Headers, "filter.store[0].numeric[2]", "upper bound"},
		{`{"store":[{"numeric":[">",5,"<",5]}]}`, Headers, "filter.store[0].numeric[3]", "not above"},
		{`{"store":[{"numeric":[">",0,"<",1,"<",2]}]}`, Headers, "filter.store[0].numeric", "6 elements"},
		{`{"store":[{"numeric":[">",1000000000.00001]}]}`, Headers, "filter.store[0].numeric[1]", "range"},
		{`{"store":[{"numeric":[">",-2e9]}]}`, Headers, "filter.store[0].numeric[1]", "range"},
		{`{"store":[{"numeric":[">",0.000001]}]}`, Headers, "filter.store[0].numeric[1]", "5 digits"},
		{`{"store":[{"numeric":[">",1e-6]}]}`, Headers, "filter.store[0].numeric[1]", "5 digits"},
		{`{"store":[{"numeric":[">",1e-400]}]}`, Headers, "filter.store[0].numeric[1]", "5 digits"},
		{`{"store":[{"numeric":[">",1e400]}]}`, Headers, "filter.store[0].numeric[1]", "range"},
		{`{"store":[1e99999999999999999999]}`, Headers, "filter.store[0]", "range"},
		{`{"$or":[{"a":["x"]},{"b":[]}]}`, Headers, "filter.$or[1].b", "empty array"},
		{`{"$or":[{"a":["x"]},{}]}`, Headers, "filter.$or[1]", "empty object"},
		{`{"o":{"$or":[{"a":["x"]},{"b":{"c":5}}]}}`, Payload, "filter.o.$or[1].b.c", "want an array"},
		// "$or" that SNS does not read as the operator is a key.
		{`{"$or":[{"numeric":["=",1]},{"prefix":"a"}]}`, Headers, "", ""},
		{`{"$or":[{"numeric":123},{"prefix":"abc"}]}`, Headers, "filter.$or[0].numeric", "have a number"},
		{`{"a.b":["x"],"c d":[{"nope":1}]}`, Payload, `filter["c d"][0].nope`, "unknown operator"},
		// Limits.
		{`{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}`, Headers, "filter", "6 attribute names"},
		{`{"a":["1"],"$or":[{"b":["1"],"c":["1"]},{"d":["1"],"e":["1"],"f":["1"]}]}`, Headers, "filter", "6 attribute names"},
		{`{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}`, Payload, "filter", "6 top-level keys"},
		{`{"a":["1"],"$or":[{"b":["1"],"c":["1"]},{"d":["1"],"e":["1"],"f":["1"]}]}`, Payload, "filter", "6 top-level keys"},
		{`{"a":["1","2","3","4","5"],"b":["1","2","3","4","5"],"c":["1","2","3","4","5","6","7"]}`, Headers, "filter", "150 combinations"},
		{`{"a":{"b":["1","2","3","4","5"]},"c":{"d":["1","2","3","4","5","6","7","8"]}}`, Payload, "filter", "150 combinations"},
		{`{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":{"k":["x"]}}}}}}}}}}}`, Payload, "filter.a.b.c.d.e.f.g.h.i.j", "nested more than 10"},
		{`{"a":["` + strings.Repeat("x", MaxBytes) + `"]}`, Headers, "filter", "bytes"},
		{`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, Headers, "filter.a" + strings.Repeat("[0]", 64), "deeper"},
		{`{"a":["x"]}`, Scope("body"), "filter", "unknown scope"},
	}
	for _, c := range cases {
		_, err := Compile([]byte(c.policy), c.scope)
		if c.path == "" {
			if err != nil {
				t.Errorf("%s (%s): %v, want no error", c.policy, c.scope, err)
			}
			continue
		}
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("%.80s (%s): err %v, want an *Error at %s", c.policy, c.scope, err, c.path)
			continue
		}
		if fe.Path != c.path || !strings.Contains(fe.Msg, c.says) {
			t.Errorf("%.80s (%s):\n got %v\nwant %s: ...%s...", c.policy, c.scope, err, c.path, c.says)
		}
		if !strings.HasPrefix(err.Error(), c.path+": ") {
			t.Errorf("%.80s: Error() %q does not start with its path", c.policy, err)
		}
	}
}

// TestDepthLimit accepts a leaf exactly MaxDepth deep.
func TestDepthLimit(t *testing.T) {
	p := `{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":["x"]}}}}}}}}}}`
	f := mustCompile(t, p, Payload)
	if got := f.Combinations(); got != MaxDepth {
		t.Errorf("combinations %d, want %d (one value times its depth)", got, MaxDepth)
	}
	if !f.Match(nil, []byte(`{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":"x"}}}}}}}}}}`)) {
		t.Error("the deepest leaf did not match")
	}
}

// TestString is the canonical form: sorted keys, "$or" among them,
// numbers shortest, one anything-but form for a value and a list.
func TestString(t *testing.T) {
	cases := []struct{ policy, want string }{
		{`{ }`, `{}`},
		{`{"b":["y"], "a":["x"]}`, `{"a":["x"],"b":["y"]}`},
		{`{"z":["1"],"$or":[{"b":["1"]},{"a":["2"]}]," ":["s"]}`, `{" ":["s"],"$or":[{"b":["1"]},{"a":["2"]}],"z":["1"]}`},
		{`{"n":[1.50, 1e2, -0, 0.00001, 1000000000]}`, `{"n":[1.5,100,0,0.00001,1000000000]}`},
		{`{"n":[{"numeric":[">=",1.0,"<",2E1]}]}`, `{"n":[{"numeric":[">=",1,"<",20]}]}`},
		{`{"s":[{"anything-but":"x"},{"anything-but":5},{"anything-but":{"suffix":"q"}}]}`, `{"s":[{"anything-but":["x"]},{"anything-but":[5]},{"anything-but":{"suffix":"q"}}]}`},
		{`{"s":[true,false,null,{"exists":false},{"cidr":"2001:DB8::/32"}]}`, `{"s":[true,false,null,{"exists":false},{"cidr":"2001:db8::/32"}]}`},
		{`{"q\"\\\u0001é<":["\u00e9\n"]}`, `{"q\"\\\u0001é<":["é\n"]}`},
	}
	for _, c := range cases {
		if got := mustCompile(t, c.policy, Headers).String(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.policy, got, c.want)
		}
	}
}
