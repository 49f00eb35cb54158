package filter

import (
	"fmt"
	"testing"
)

func mustCompile(t testing.TB, policy string, scope Scope) *Filter {
	t.Helper()
	f, err := Compile([]byte(policy), scope)
	if err != nil {
		t.Fatalf("Compile(%s, %s): %v", policy, scope, err)
	}
	return f
}

type h = map[string]string

// headerCases follow SNS's documented examples for each operator in the
// MessageAttributes scope, in cases of our own.
var headerCases = []struct {
	name    string
	policy  string
	headers h
	want    bool
}{
	// Exact strings: case-sensitive, any element of the array.
	{"exact hit", `{"colour":["red","blue"]}`, h{"colour": "blue"}, true},
	{"exact miss", `{"colour":["red","blue"]}`, h{"colour": "green"}, false},
	{"exact is case-sensitive", `{"colour":["red"]}`, h{"colour": "Red"}, false},
	{"exact absent key", `{"colour":["red"]}`, h{"size": "red"}, false},
	{"exact string array element", `{"colour":["red"]}`, h{"colour": `["green","red"]`}, true},
	{"exact string array no element", `{"colour":["red"]}`, h{"colour": `["green","blue"]`}, false},
	{"not an array is a plain string", `{"colour":["[red"]}`, h{"colour": "[red"}, true},
	{"string does not match number text", `{"size":["5"]}`, h{"size": "5.0"}, false},
	{"string matches same text", `{"size":["5"]}`, h{"size": "5"}, true},

	// Numbers: a header holding a JSON number is that number.
	{"number equal", `{"price":[5]}`, h{"price": "5.0"}, true},
	{"number exponent", `{"price":[500]}`, h{"price": "5e2"}, true},
	{"number five decimals", `{"price":[0.1]}`, h{"price": "0.100001"}, true},
	{"number sixth decimal rounds", `{"price":[0.1]}`, h{"price": "0.10001"}, false},
	{"number not json", `{"price":[5]}`, h{"price": "+5"}, false},
	{"number text", `{"price":[5]}`, h{"price": "five"}, false},
	{"number in array", `{"price":[5]}`, h{"price": `[3, 5]`}, true},
	{"string in array is not a number", `{"price":[5]}`, h{"price": `["5"]`}, false},

	// AND across keys, OR within.
	{"and both", `{"colour":["red"],"size":["L"]}`, h{"colour": "red", "size": "L"}, true},
	{"and one", `{"colour":["red"],"size":["L"]}`, h{"colour": "red", "size": "M"}, false},
	{"other headers ignored", `{"colour":["red"]}`, h{"colour": "red", "extra": "x"}, true},

	// prefix, suffix, equals-ignore-case.
	{"prefix hit", `{"region":[{"prefix":"eu-"}]}`, h{"region": "eu-west"}, true},
	{"prefix miss", `{"region":[{"prefix":"eu-"}]}`, h{"region": "us-east"}, false},
	{"prefix on number text", `{"code":[{"prefix":"12"}]}`, h{"code": "123"}, true},
	{"suffix hit", `{"file":[{"suffix":".png"}]}`, h{"file": "cat.png"}, true},
	{"suffix miss", `{"file":[{"suffix":".png"}]}`, h{"file": "cat.jpg"}, false},
	{"ignore case hit", `{"colour":[{"equals-ignore-case":"RED"}]}`, h{"colour": "rEd"}, true},
	{"ignore case miss", `{"colour":[{"equals-ignore-case":"RED"}]}`, h{"colour": "reds"}, false},

	// anything-but.
	{"anything-but value", `{"colour":[{"anything-but":"red"}]}`, h{"colour": "blue"}, true},
	{"anything-but value hit", `{"colour":[{"anything-but":"red"}]}`, h{"colour": "red"}, false},
	{"anything-but list", `{"colour":[{"anything-but":["red","blue"]}]}`, h{"colour": "green"}, true},
	{"anything-but list hit", `{"colour":[{"anything-but":["red","blue"]}]}`, h{"colour": "blue"}, false},
	{"anything-but absent", `{"colour":[{"anything-but":"red"}]}`, h{"size": "L"}, false},
	{"anything-but or absent", `{"colour":[{"anything-but":"red"},{"exists":false}]}`, h{"size": "L"}, true},
	{"anything-but array one other", `{"colour":[{"anything-but":["red"]}]}`, h{"colour": `["red","green"]`}, true},
	{"anything-but array all listed", `{"colour":[{"anything-but":["red"]}]}`, h{"colour": `["red"]`}, false},
	{"anything-but number", `{"price":[{"anything-but":[100, 200]}]}`, h{"price": "100.0"}, false},
	{"anything-but number other", `{"price":[{"anything-but":[100, 200]}]}`, h{"price": "150"}, true},
	{"anything-but prefix", `{"region":[{"anything-but":{"prefix":"eu-"}}]}`, h{"region": "us-east"}, true},
	{"anything-but prefix hit", `{"region":[{"anything-but":{"prefix":"eu-"}}]}`, h{"region": "eu-west"}, false},
	{"anything-but suffix", `{"file":[{"anything-but":{"suffix":".tmp"}}]}`, h{"file": "a.txt"}, true},
	{"anything-but suffix hit", `{"file":[{"anything-but":{"suffix":".tmp"}}]}`, h{"file": "a.tmp"}, false},

	// numeric.
	{"numeric =", `{"price":[{"numeric":["=",9.5]}]}`, h{"price": "9.50"}, true},
	{"numeric = miss", `{"price":[{"numeric":["=",9.5]}]}`, h{"price": "9.51"}, false},
	{"numeric >", `{"price":[{"numeric":[">",0]}]}`, h{"price": "0.00001"}, true},
	{"numeric > edge", `{"price":[{"numeric":[">",0]}]}`, h{"price": "0"}, false},
	{"numeric >=", `{"price":[{"numeric":[">=",10]}]}`, h{"price": "10"}, true},
	{"numeric <", `{"price":[{"numeric":["<",10]}]}`, h{"price": "-3"}, true},
	{"numeric < edge", `{"price":[{"numeric":["<",10]}]}`, h{"price": "10"}, false},
	{"numeric <=", `{"price":[{"numeric":["<=",10]}]}`, h{"price": "10"}, true},
	{"numeric range in", `{"price":[{"numeric":[">",0,"<=",100]}]}`, h{"price": "100"}, true},
	{"numeric range low edge", `{"price":[{"numeric":[">",0,"<=",100]}]}`, h{"price": "0"}, false},
	{"numeric range above", `{"price":[{"numeric":[">",0,"<=",100]}]}`, h{"price": "100.5"}, false},
	{"numeric on text", `{"price":[{"numeric":[">",0]}]}`, h{"price": "cheap"}, false},
	{"numeric huge value", `{"price":[{"numeric":[">",0]}]}`, h{"price": "1e400"}, true},
	{"numeric array element", `{"price":[{"numeric":[">",50]}]}`, h{"price": "[10, 60]"}, true},

	// exists.
	{"exists true", `{"store":[{"exists":true}]}`, h{"store": "north"}, true},
	{"exists true empty value", `{"store":[{"exists":true}]}`, h{"store": ""}, true},
	{"exists true absent", `{"store":[{"exists":true}]}`, h{"other": "x"}, false},
	{"exists false absent", `{"store":[{"exists":false}]}`, h{"other": "x"}, true},
	{"exists false present", `{"store":[{"exists":false}]}`, h{"store": "north"}, false},
	{"exists false no headers", `{"store":[{"exists":false}]}`, h{}, false},
	{"exists false nil headers", `{"store":[{"exists":false}]}`, nil, false},

	// cidr.
	{"cidr v4 in", `{"ip":[{"cidr":"10.0.0.0/24"}]}`, h{"ip": "10.0.0.255"}, true},
	{"cidr v4 out", `{"ip":[{"cidr":"10.0.0.0/24"}]}`, h{"ip": "10.0.1.0"}, false},
	{"cidr v6 in", `{"ip":[{"cidr":"2001:db8::/32"}]}`, h{"ip": "2001:db8:1::7"}, true},
	{"cidr v6 out", `{"ip":[{"cidr":"2001:db8::/32"}]}`, h{"ip": "2001:db9::1"}, false},
	{"cidr v4 against v6 net", `{"ip":[{"cidr":"2001:db8::/32"}]}`, h{"ip": "10.0.0.1"}, false},
	{"cidr v4-mapped", `{"ip":[{"cidr":"10.0.0.0/8"}]}`, h{"ip": "::ffff:10.1.2.3"}, true},
	{"cidr not an address", `{"ip":[{"cidr":"10.0.0.0/8"}]}`, h{"ip": "10.0.0"}, false},

	// $or.
	{"or first", `{"kind":["order"],"$or":[{"colour":["red"]},{"size":["L"]}]}`, h{"kind": "order", "colour": "red"}, true},
	{"or second", `{"kind":["order"],"$or":[{"colour":["red"]},{"size":["L"]}]}`, h{"kind": "order", "size": "L"}, true},
	{"or neither", `{"kind":["order"],"$or":[{"colour":["red"]},{"size":["L"]}]}`, h{"kind": "order", "size": "M"}, false},
	{"or and outside", `{"kind":["order"],"$or":[{"colour":["red"]},{"size":["L"]}]}`, h{"kind": "refund", "size": "L"}, false},
	{"or nested", `{"$or":[{"a":["1"]},{"$or":[{"b":["2"]},{"c":["3"]}]}]}`, h{"c": "3"}, true},
	{"or nested miss", `{"$or":[{"a":["1"]},{"$or":[{"b":["2"]},{"c":["3"]}]}]}`, h{"d": "4"}, false},
	{"or one branch is a key", `{"$or":["x"]}`, h{"$or": "x"}, true},

	// The empty policy.
	{"empty policy", `{}`, nil, true},
}

func TestMatchHeaders(t *testing.T) {
	for _, c := range headerCases {
		t.Run(c.name, func(t *testing.T) {
			f := mustCompile(t, c.policy, Headers)
			if got := f.Match(c.headers, []byte(`{"colour":"red"}`)); got != c.want {
				t.Errorf("%s on %v: got %v, want %v", c.policy, c.headers, got, c.want)
			}
		})
	}
}

// payloadCases are the MessageBody scope's: typed JSON values, nesting,
// arrays.
var payloadCases = []struct {
	name    string
	policy  string
	payload string
	want    bool
}{
	{"exact string", `{"colour":["red"]}`, `{"colour":"red"}`, true},
	{"exact string miss", `{"colour":["red"]}`, `{"colour":"blue"}`, false},
	{"exact string array", `{"colour":["red"]}`, `{"colour":["blue","red"]}`, true},
	{"exact escaped", `{"colour":["red"]}`, `{"colour":"r\u0065d"}`, true},
	{"escaped key", `{"colour":["red"]}`, `{"col\u006fur":"red"}`, true},
	{"string is not number", `{"n":["5"]}`, `{"n":5}`, false},
	{"number is not string", `{"n":[5]}`, `{"n":"5"}`, false},
	{"number", `{"n":[5]}`, `{"n":5.00000}`, true},
	{"true", `{"ok":[true]}`, `{"ok":true}`, true},
	{"true miss", `{"ok":[true]}`, `{"ok":false}`, false},
	{"false", `{"ok":[false]}`, `{"ok":false}`, true},
	{"null", `{"v":[null]}`, `{"v":null}`, true},
	{"null miss", `{"v":[null]}`, `{"v":0}`, false},
	{"null absent", `{"v":[null]}`, `{}`, false},

	// Nesting and arrays.
	{"nested", `{"order":{"store":["north"]}}`, `{"order":{"store":"north","id":7}}`, true},
	{"nested miss", `{"order":{"store":["north"]}}`, `{"order":{"store":"south"}}`, false},
	{"nested not object", `{"order":{"store":["north"]}}`, `{"order":"north"}`, false},
	{"nested in array", `{"records":{"kind":["put"]}}`, `{"records":[{"kind":"get"},{"kind":"put"}]}`, true},
	{"nested in array miss", `{"records":{"kind":["put"]}}`, `{"records":[{"kind":"get"}]}`, false},
	{"deep", `{"a":{"b":{"c":[{"numeric":[">",1]}]}}}`, `{"a":{"b":{"c":2,"d":[1,{"x":1}]},"z":"q"}}`, true},
	{"leaf on object", `{"a":["x"]}`, `{"a":{"b":"x"}}`, false},
	{"skipped values", `{"z":["hit"]}`, `{"a":[1,{"b":[true,null,"]}"]}],"s":"\"}","n":-1.5e3,"z":"hit"}`, true},
	{"whitespace", `{"z":["hit"]}`, " {\n \"z\" : \t[ \"hit\" ] }\n", true},

	// Operators on payload values.
	{"prefix", `{"s":[{"prefix":"ab"}]}`, `{"s":"abc"}`, true},
	{"prefix not on number", `{"s":[{"prefix":"1"}]}`, `{"s":123}`, false},
	{"suffix", `{"s":[{"suffix":"bc"}]}`, `{"s":"abc"}`, true},
	{"ignore case", `{"s":[{"equals-ignore-case":"ÄBC"}]}`, `{"s":"äbc"}`, true},
	{"numeric", `{"p":[{"numeric":[">=",10,"<",20]}]}`, `{"p":19.99999}`, true},
	{"numeric edge", `{"p":[{"numeric":[">=",10,"<",20]}]}`, `{"p":20}`, false},
	{"numeric on string", `{"p":[{"numeric":[">",0]}]}`, `{"p":"5"}`, false},
	{"anything-but", `{"s":[{"anything-but":["a","b"]}]}`, `{"s":"c"}`, true},
	{"anything-but hit", `{"s":[{"anything-but":["a","b"]}]}`, `{"s":"a"}`, false},
	{"anything-but array", `{"s":[{"anything-but":["a"]}]}`, `{"s":["a","c"]}`, true},
	{"anything-but null", `{"s":[{"anything-but":["a"]}]}`, `{"s":null}`, false},
	{"anything-but absent", `{"s":[{"anything-but":["a"]}]}`, `{}`, false},
	{"anything-but other type", `{"s":[{"anything-but":["5"]}]}`, `{"s":5}`, true},
	{"anything-but prefix", `{"s":[{"anything-but":{"prefix":"x"}}]}`, `{"s":"yz"}`, true},
	{"cidr", `{"ip":[{"cidr":"192.168.0.0/16"}]}`, `{"ip":"192.168.4.4"}`, true},
	{"cidr not string", `{"ip":[{"cidr":"0.0.0.0/0"}]}`, `{"ip":1}`, false},

	// exists.
	{"exists true", `{"s":[{"exists":true}]}`, `{"s":"x"}`, true},
	{"exists true null", `{"s":[{"exists":true}]}`, `{"s":null}`, false},
	{"exists true empty array", `{"s":[{"exists":true}]}`, `{"s":[]}`, false},
	{"exists true object", `{"s":[{"exists":true}]}`, `{"s":{"t":1}}`, false},
	{"exists false absent", `{"s":[{"exists":false}]}`, `{"t":1}`, true},
	{"exists false empty object", `{"s":[{"exists":false}]}`, `{}`, true},
	{"exists false present", `{"s":[{"exists":false}]}`, `{"s":0}`, false},
	{"exists false nested absent", `{"a":{"s":[{"exists":false}]}}`, `{"a":{"t":1}}`, true},

	// Payloads that are not JSON objects match nothing.
	{"not JSON", `{"s":[{"exists":false}]}`, `not json`, false},
	{"array payload", `{"s":[{"exists":false}]}`, `[{"t":1}]`, false},
	{"string payload", `{"s":[{"exists":false}]}`, `"x"`, false},
	{"empty payload", `{"s":[{"exists":false}]}`, ``, false},
	{"truncated", `{"s":["x"]}`, `{"s":"x"`, false},
	{"empty policy not JSON", `{}`, `not json`, true},

	// $or, at the top and nested.
	{"or", `{"$or":[{"a":["1"]},{"b":["2"]}]}`, `{"b":"2"}`, true},
	{"or miss", `{"$or":[{"a":["1"]},{"b":["2"]}]}`, `{"b":"3"}`, false},
	{"or nested", `{"o":{"$or":[{"a":["1"]},{"b":["2"]}]}}`, `{"o":{"a":"1"}}`, true},
	{"or nested wrong level", `{"o":{"$or":[{"a":["1"]},{"b":["2"]}]}}`, `{"a":"1"}`, false},
	{"same path in two branches", `{"$or":[{"a":["1"],"b":["x"]},{"a":["2"]}]}`, `{"a":"2","b":"y"}`, true},
	{"same path in two branches miss", `{"$or":[{"a":["1"],"b":["x"]},{"a":["2"]}]}`, `{"a":"1","b":"y"}`, false},
	{"path both leaf and parent", `{"$or":[{"a":["x"]},{"a":{"b":["y"]}}]}`, `{"a":{"b":"y"}}`, true},
	{"path both leaf and parent leaf", `{"$or":[{"a":["x"]},{"a":{"b":["y"]}}]}`, `{"a":"x"}`, true},
}

func TestMatchPayload(t *testing.T) {
	for _, c := range payloadCases {
		t.Run(c.name, func(t *testing.T) {
			f := mustCompile(t, c.policy, Payload)
			if got := f.Match(h{"colour": "red"}, []byte(c.payload)); got != c.want {
				t.Errorf("%s on %s: got %v, want %v", c.policy, c.payload, got, c.want)
			}
		})
	}
}

// TestMatchManyConditions crosses the 512 condition bits Match keeps on
// its stack, so the bitset it allocates instead is exercised too: 150
// $or branches of five one-value keys are 150 combinations and 750
// conditions.
func TestMatchManyConditions(t *testing.T) {
	b := []byte(`{"$or":[`)
	for i := range 150 {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"a":["v%d"],"b":["x"],"c":["x"],"d":["x"],"e":["x"]}`, i)
	}
	b = append(b, `]}`...)
	f, err := Compile(b, Payload)
	if err != nil {
		t.Fatal(err)
	}
	if f.ncond <= 512 {
		t.Fatalf("%d conditions: the test no longer crosses the stack bitset", f.ncond)
	}
	if !f.Match(nil, []byte(`{"a":"v149","b":"x","c":"x","d":"x","e":"x"}`)) {
		t.Error("the last branch's values did not match")
	}
	if f.Match(nil, []byte(`{"a":"v149","b":"x","c":"x","d":"x","e":"y"}`)) {
		t.Error("a record missing one key of every branch matched")
	}
}
