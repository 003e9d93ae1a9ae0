package ctrl

import "time"

// ABIVersion is checked by the judge before it calls a module, so a module
// built against another SDK is refused with a clear message.
const ABIVersion = 2 // 2: lengths and numbers without varints, an object's kind as one byte

// Op is one kind of call from a learner's module to the judge.
type Op uint32

const (
	OpRequest      Op = 1 + iota // which object to reconcile
	OpGet                        // Client.Get
	OpList                       // Client.List
	OpCreate                     // Client.Create
	OpUpdate                     // Client.Update
	OpUpdateStatus               // Client.UpdateStatus
	OpDelete                     // Client.Delete
	OpLog                        // Log
	OpNow                        // Now
	OpResult                     // what Reconcile returned
	OpTooLarge                   // a request too large to send: what it was, not its bytes
	opLimit
)

// Call is a request from the module, as the judge decodes it. Which fields
// are set depends on Op.
type Call struct {
	Op           Op
	Kind         Kind              // Get, List, Delete
	Key          ObjectKey         // Get, Delete
	Object       Object            // Create, Update, UpdateStatus
	Namespace    string            // List
	Labels       map[string]string // List
	OwnerUID     string            // List
	Text         string            // Log; Result: the error's text
	HasError     bool              // Result
	ErrorReason  string            // Result: the StatusError reason, if any
	RequeueAfter time.Duration     // Result
	Of           Op                // TooLarge: the request that was not sent
	Size         int               // TooLarge: its encoded size in bytes
}

// OpLimit is one past the last Op.
const OpLimit = opLimit

// MaxRequestBytes is the largest request a module sends, as the real API
// server refuses a body over 3 MiB ("Request entity too large: limit is
// 3145728"). A larger one is replaced by an OpTooLarge call that names it,
// so the judge can refuse it in its own words; it also keeps every message
// under the sandbox's limit.
const MaxRequestBytes = 3 << 20

// MaxObjectBytes is the largest object the API server stores, encoded:
// etcd's default request limit, 1.5 MiB. A module does not send a larger
// one either, but an OpTooLarge call that names it.
const MaxObjectBytes = 3 << 19

// maxTextBytes bounds a log line or error text a module sends; the judge
// keeps far less of either.
const maxTextBytes = 64 << 10

// cutText shortens s to at most maxTextBytes.
func cutText(s string) string {
	if len(s) > maxTextBytes {
		return s[:maxTextBytes]
	}
	return s
}

// tooLarge is the call that stands in for request c, whose encoding took
// size bytes: its kind and name (capped: a name is at most 253 bytes when
// valid) and its size.
func tooLarge(c *Call, size int) *Call {
	t := &Call{Op: OpTooLarge, Of: c.Op, Size: size, Kind: c.Kind, Key: c.Key}
	if c.Object != nil {
		m := c.Object.GetObjectMeta()
		t.Kind, t.Key = c.Object.GetObjectKind(), ObjectKey{Namespace: m.Namespace, Name: m.Name}
		if t.Key.Name == "" {
			t.Key.Name = m.GenerateName
		}
	}
	t.Kind = Kind(cutName(string(t.Kind)))
	t.Key.Namespace, t.Key.Name = cutName(t.Key.Namespace), cutName(t.Key.Name)
	return t
}

func cutName(s string) string {
	if len(s) > 256 {
		return s[:256]
	}
	return s
}

// Reply is the judge's answer to a Call.
type Reply struct {
	Err     *StatusError // any API error
	Object  Object       // Get, Create, Update, UpdateStatus
	Items   []Object     // List, unless decoded into the caller's list
	listed  bool         // List: the items went into the caller's list
	Request Request      // Request
	Now     time.Time    // Now
}

func appendCall(b []byte, c *Call) []byte {
	e := encoder{b: b}
	e.call(c)
	return e.b
}

func (e *encoder) call(c *Call) {
	switch c.Op {
	case OpGet, OpDelete:
		e.str(string(c.Kind))
		e.str(c.Key.Namespace)
		e.str(c.Key.Name)
	case OpList:
		e.str(string(c.Kind))
		e.str(c.Namespace)
		e.strMap(c.Labels)
		e.str(c.OwnerUID)
	case OpCreate, OpUpdate, OpUpdateStatus:
		e.object(c.Object)
	case OpLog:
		e.str(c.Text)
	case OpResult:
		e.int64(int64(c.RequeueAfter))
		e.bool(c.HasError)
		e.str(c.Text)
		e.str(c.ErrorReason)
	case OpTooLarge:
		e.uint64(uint64(c.Of))
		e.uint64(uint64(c.Size))
		e.str(string(c.Kind))
		e.str(c.Key.Namespace)
		e.str(c.Key.Name)
	}
}

// DecodeCall decodes a call the module made. It rejects anything malformed.
func DecodeCall(op Op, b []byte) (Call, error) {
	c := Call{Op: op}
	d := decoder{b: string(b)}
	switch op {
	case OpRequest, OpNow:
	case OpGet, OpDelete:
		c.Kind = Kind(d.str())
		c.Key.Namespace = d.str()
		c.Key.Name = d.str()
	case OpList:
		c.Kind = Kind(d.str())
		c.Namespace = d.str()
		c.Labels = d.strMap()
		c.OwnerUID = d.str()
	case OpCreate, OpUpdate, OpUpdateStatus:
		c.Object = d.object()
	case OpLog:
		c.Text = d.str()
	case OpResult:
		c.RequeueAfter = time.Duration(d.int64())
		c.HasError = d.bool()
		c.Text = d.str()
		c.ErrorReason = d.str()
	case OpTooLarge:
		c.Of = Op(d.uint64())
		c.Size = int(d.uint64() & (1<<31 - 1))
		c.Kind = Kind(d.str())
		c.Key.Namespace = d.str()
		c.Key.Name = d.str()
	default:
		d.fail()
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail()
	}
	if d.err != nil {
		return Call{}, d.err
	}
	return c, nil
}

// AppendReply appends the wire form of the judge's reply to op.
func AppendReply(b []byte, op Op, r *Reply) []byte {
	e := encoder{b: b}
	if r.Err != nil {
		e.bool(true)
		e.int64(int64(r.Err.Code))
		e.str(r.Err.Reason)
		e.str(r.Err.Message)
		return e.b
	}
	e.bool(false)
	switch op {
	case OpRequest:
		e.str(r.Request.Namespace)
		e.str(r.Request.Name)
	case OpNow:
		e.time(r.Now)
	case OpGet, OpCreate, OpUpdate, OpUpdateStatus:
		e.object(r.Object)
	case OpList:
		e.length(len(r.Items))
		for _, o := range r.Items {
			e.object(o)
		}
	}
	return e.b
}

// decodeReply decodes the judge's reply to op. An object of obj's kind
// is decoded into obj itself, and a List's items, if all of list's kind,
// into list (r.listed), so no object is decoded only to be copied.
func decodeReply(op Op, b string, obj Object, list ObjectList, r *Reply) error {
	d := decoder{b: b}
	if d.bool() {
		r.Err = &StatusError{Code: d.int32(), Reason: d.str(), Message: d.str()}
		return d.err
	}
	switch op {
	case OpRequest:
		r.Request.Namespace = d.str()
		r.Request.Name = d.str()
	case OpNow:
		r.Now = d.time()
	case OpGet, OpCreate, OpUpdate, OpUpdateStatus:
		if obj != nil && d.into(obj) {
			r.Object = obj
		} else {
			r.Object = d.object()
		}
	case OpList:
		n := d.count()
		if list != nil {
			r.listed = decodeList(&d, list, n)
			break
		}
		r.Items = make([]Object, 0, n)
		for i := 0; i < n && d.err == nil; i++ {
			r.Items = append(r.Items, d.object())
		}
	}
	return d.err
}
