package store

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is what an operator ID names.
type Kind uint8

// The kinds of operator IDs.
const (
	// KindDelivery: a row of jadpo_deliveries, written "d42".
	KindDelivery Kind = iota + 1
	// KindParked: a row of jadpo_parked_messages, written "p7".
	KindParked
)

func (k Kind) String() string {
	switch k {
	case KindDelivery:
		return "delivery"
	case KindParked:
		return "parked message"
	}
	return "unknown"
}

// ID is an operator's name for a delivery or a parked message: a letter that says which
// table ("d" for a delivery, "p" for a parked message) and the row's id, "d42" or "p7".
type ID struct {
	Kind Kind
	N    int64
}

// DeliveryID is the operator ID of delivery n.
func DeliveryID(n int64) ID { return ID{Kind: KindDelivery, N: n} }

// ParkedID is the operator ID of parked message n.
func ParkedID(n int64) ID { return ID{Kind: KindParked, N: n} }

func (id ID) String() string {
	switch id.Kind {
	case KindDelivery:
		return "d" + strconv.FormatInt(id.N, 10)
	case KindParked:
		return "p" + strconv.FormatInt(id.N, 10)
	}
	return "?" + strconv.FormatInt(id.N, 10)
}

// MarshalText writes the ID as String does.
func (id ID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText reads an ID as ParseID does.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// ParseID reads "d42" or "p7" (the letter in either case).
func ParseID(s string) (ID, error) {
	t := strings.TrimSpace(s)
	if len(t) < 2 {
		return ID{}, fmt.Errorf("%q is not an id: want d<number> for a delivery or p<number> for a parked message", s)
	}
	var kind Kind
	switch t[0] {
	case 'd', 'D':
		kind = KindDelivery
	case 'p', 'P':
		kind = KindParked
	default:
		return ID{}, fmt.Errorf("%q is not an id: want d<number> for a delivery or p<number> for a parked message", s)
	}
	digits := t[1:]
	for _, c := range digits {
		if c < '0' || c > '9' {
			return ID{}, fmt.Errorf("%q is not an id: want d<number> for a delivery or p<number> for a parked message", s)
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 {
		return ID{}, fmt.Errorf("%q is not an id: the number is out of range", s)
	}
	return ID{Kind: kind, N: n}, nil
}
