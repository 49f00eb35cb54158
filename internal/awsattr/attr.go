package awsattr

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"
)

// Attribute is one message attribute. StringValue carries String and
// Number values (and their custom forms), BinaryValue Binary ones.
type Attribute struct {
	Name        string
	DataType    string
	StringValue string
	BinaryValue []byte
}

// The rules SQS and SNS hold attributes to.
const (
	MaxAttributes = 10  // per message
	MaxNameLen    = 256 // bytes of a name
	MaxTypeLen    = 256 // bytes of a data type, custom part included
)

// Kind is a data type's base: "String", "Number" or "Binary".
func Kind(dataType string) string {
	base, _, _ := strings.Cut(dataType, ".")
	return base
}

// Error is a refused attribute list, with the AWS error code to answer.
type Error struct {
	Code    string // InvalidParameterValue or InvalidAttributeName etc.
	Message string
}

func (e *Error) Error() string { return e.Message }

func invalid(format string, args ...any) error {
	return &Error{Code: "InvalidParameterValue", Message: fmt.Sprintf(format, args...)}
}

// Check validates attrs as SQS does and sorts them by name. Names are
// 1..256 of [A-Za-z0-9_.-], not starting "AWS." or "Amazon." (any case)
// nor "narad-" (the broker's header names), without "..", not starting
// or ending with "."; two names may not differ only in case (their
// headers would be one); a data type is String, Number or Binary with an
// optional ".custom" suffix; a value is not empty; a String value holds
// only the characters a message body may hold; a Number value is a
// decimal number within SQS's range.
func Check(attrs []Attribute) error {
	if len(attrs) > MaxAttributes {
		return invalid("Number of message attributes [%d] exceeds the allowed maximum [%d].", len(attrs), MaxAttributes)
	}
	seen := make(map[string]string, len(attrs))
	for _, a := range attrs {
		if err := checkName(a.Name); err != nil {
			return err
		}
		low := strings.ToLower(a.Name)
		if prev, ok := seen[low]; ok {
			if prev == a.Name {
				return invalid("Message attribute name '%s' is given more than once.", a.Name)
			}
			return invalid("Message attribute names '%s' and '%s' differ only in case; Narad stores attributes as headers, whose names are lower case.", prev, a.Name)
		}
		seen[low] = a.Name
		if err := checkValue(a); err != nil {
			return err
		}
	}
	slices.SortFunc(attrs, func(x, y Attribute) int { return strings.Compare(x.Name, y.Name) })
	return nil
}

func checkName(n string) error {
	if n == "" {
		return invalid("The request must contain non-empty message attribute names.")
	}
	if len(n) > MaxNameLen {
		return invalid("Message attribute name '%.32s...' is longer than %d characters.", n, MaxNameLen)
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return invalid("Message attribute name '%s' has the invalid character %q; names are [A-Za-z0-9_.-].", n, c)
		}
	}
	low := strings.ToLower(n)
	switch {
	case strings.HasPrefix(low, "aws.") || strings.HasPrefix(low, "amazon."):
		return invalid("Message attribute name '%s' is reserved for use by AWS.", n)
	case strings.HasPrefix(low, "narad-"):
		return invalid("Message attribute name '%s' is reserved: names beginning 'narad-' are the broker's headers.", n)
	case strings.Contains(n, ".."), strings.HasPrefix(n, "."), strings.HasSuffix(n, "."):
		return invalid("Message attribute name '%s' may not start or end with a period or hold two in a row.", n)
	}
	return nil
}

func checkValue(a Attribute) error {
	if a.DataType == "" {
		return invalid("The message attribute '%s' must contain a non-empty attribute type.", a.Name)
	}
	if len(a.DataType) > MaxTypeLen {
		return invalid("The message attribute '%s' has a data type longer than %d characters.", a.Name, MaxTypeLen)
	}
	base, custom, hasCustom := strings.Cut(a.DataType, ".")
	if hasCustom && (custom == "" || !utf8.ValidString(custom) || !ValidText(custom)) {
		return invalid("The message attribute '%s' has an invalid custom data type '%s'.", a.Name, a.DataType)
	}
	switch base {
	case "String", "Number":
		if a.BinaryValue != nil {
			return invalid("The message attribute '%s' with type '%s' must use field 'String'.", a.Name, base)
		}
		if a.StringValue == "" {
			return invalid("The message attribute '%s' must contain a non-empty message attribute value.", a.Name)
		}
		if !ValidText(a.StringValue) {
			return &Error{Code: "InvalidParameterValue", Message: fmt.Sprintf("The message attribute '%s' contains characters outside the allowed set.", a.Name)}
		}
		if base == "Number" && !validNumber(a.StringValue) {
			return invalid("Can't cast the value of message (user) attribute '%s' to a number.", a.Name)
		}
	case "Binary":
		if a.StringValue != "" {
			return invalid("The message attribute '%s' with type 'Binary' must use field 'Binary'.", a.Name)
		}
		if len(a.BinaryValue) == 0 {
			return invalid("The message attribute '%s' must contain a non-empty message attribute value.", a.Name)
		}
	default:
		return invalid("The type of message (user) attribute '%s' is invalid. You must use only the following supported type prefixes: Binary, Number, String.", a.Name)
	}
	return nil
}

// validNumber: a decimal number of at most 38 significant digits,
// between -10^128 and 10^126 (SQS's Number).
func validNumber(s string) bool {
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "/xXpP_") || strings.HasPrefix(s, "0x") {
		return false
	}
	digits := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 'e' || c == 'E' {
			break
		} else if '0' <= c && c <= '9' {
			digits++
		}
	}
	if digits > 38 {
		return false
	}
	lo, _ := new(big.Rat).SetString("-1e128")
	hi, _ := new(big.Rat).SetString("1e126")
	return r.Cmp(lo) >= 0 && r.Cmp(hi) <= 0
}

// ValidText reports whether s holds only the characters SQS allows in a
// message body: #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD |
// #x10000 to #x10FFFF (XML's characters), as valid UTF-8.
func ValidText(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != 0x9 && c != 0xA && c != 0xD {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return false
		}
		if (r >= 0xD800 && r <= 0xDFFF) || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += n
	}
	return true
}

// MD5OfBody is the hex MD5 of a message body (MD5OfMessageBody).
func MD5OfBody(body []byte) string {
	sum := md5.Sum(body)
	return hex.EncodeToString(sum[:])
}

// MD5OfAttributes is MD5OfMessageAttributes by AWS's algorithm: over the
// attributes sorted by name, each as its name, its data type (each a
// 4-byte big-endian length and the bytes), a transport byte (1 for a
// string value, 2 for a binary one) and the value (length and bytes).
// Empty when there are none, as SQS leaves the field out.
func MD5OfAttributes(attrs []Attribute) string {
	if len(attrs) == 0 {
		return ""
	}
	sorted := slices.Clone(attrs)
	slices.SortFunc(sorted, func(x, y Attribute) int { return strings.Compare(x.Name, y.Name) })
	h := md5.New()
	var n [4]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint32(n[:], uint32(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, a := range sorted {
		put([]byte(a.Name))
		put([]byte(a.DataType))
		if Kind(a.DataType) == "Binary" {
			h.Write([]byte{2})
			put(a.BinaryValue)
		} else {
			h.Write([]byte{1})
			put([]byte(a.StringValue))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Size is what attrs count toward a message's size, as SQS counts it:
// names, data types and values.
func Size(attrs []Attribute) int {
	n := 0
	for _, a := range attrs {
		n += len(a.Name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return n
}
