package auth

import "time"

// The two dates of a SigV4 request — X-Amz-Date (YYYYMMDDTHHMMSSZ) and the
// credential scope's day (YYYYMMDD) — are read here by hand rather than by
// time.Parse, which was four tenths of parsing an Authorization header
// (and 1.4% of a node's CPU receiving SQS messages one at a time). The
// rules are time.Parse's for these layouts, with one difference:
// time.Parse also takes a fractional second after the seconds
// ("...T120000.5Z", or with a comma), which AWS's format has no place
// for; parseAmzDate refuses it. The fuzz test holds both to time.Parse
// on everything else.

// parseAmzDate reads an X-Amz-Date, in UTC.
func parseAmzDate(s string) (time.Time, bool) {
	if len(s) != len(amzDateLayout) || s[8] != 'T' || s[15] != 'Z' {
		return time.Time{}, false
	}
	y, m, d, ok := scopeDate(s[:8])
	hh, ok1 := digits2(s[9:11])
	mm, ok2 := digits2(s[11:13])
	ss, ok3 := digits2(s[13:15])
	if !ok || !ok1 || !ok2 || !ok3 || hh > 23 || mm > 59 || ss > 59 {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(m), d, hh, mm, ss, 0, time.UTC), true
}

// validScopeDate reports whether s is a day as YYYYMMDD.
func validScopeDate(s string) bool {
	_, _, _, ok := scopeDate(s)
	return ok
}

// scopeDate reads YYYYMMDD: a month 1–12 and a day that month has.
func scopeDate(s string) (y, m, d int, ok bool) {
	if len(s) != 8 {
		return 0, 0, 0, false
	}
	hi, ok1 := digits2(s[0:2])
	lo, ok2 := digits2(s[2:4])
	m, ok3 := digits2(s[4:6])
	d, ok4 := digits2(s[6:8])
	y = hi*100 + lo
	if !ok1 || !ok2 || !ok3 || !ok4 || m < 1 || m > 12 || d < 1 || d > daysIn(time.Month(m), y) {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

func digits2(s string) (int, bool) {
	a, b := s[0]-'0', s[1]-'0'
	if a > 9 || b > 9 {
		return 0, false
	}
	return int(a)*10 + int(b), true
}

// daysIn is the number of days of month m in year y.
func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
