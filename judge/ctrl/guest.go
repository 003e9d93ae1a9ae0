package ctrl

import (
	"context"
	"errors"
)

// The Client a learner's Reconcile receives: every method is one host call.

var reconciler Reconciler

// Register installs the learner's Reconcile. The judge's generated glue
// calls it; a learner has no need to.
func Register(r Reconciler) { reconciler = r }

// hostClient's methods take a pointer: through the Client interface, a
// value receiver is reached by way of a generated wrapper, one more call
// in the interpreter for every Get and List.
type hostClient struct{}

func invoke(c *Call, r *Reply) error { return invokeInto(c, nil, nil, r) }

// invokeInto makes call c and decodes the reply into r; a reply's object
// of obj's kind is decoded into obj, a List's items into list (no copy of
// each made on the side). r is the caller's, not a result: a Reply is a
// dozen words, and each copy of it as a result costs as many loads and
// stores in the interpreter.
func invokeInto(c *Call, obj Object, list ObjectList, r *Reply) error {
	// An oversized request is measured, never built: its strings are
	// not copied, and the module's memory does not grow to hold it.
	limit := MaxRequestBytes
	if c.Object != nil {
		limit = MaxObjectBytes // a write's message is the object
	}
	e := encoder{b: scratch[:0], limit: limit}
	e.call(c)
	op, msg := c.Op, e.b
	if size := len(e.b) + e.skipped; size > limit {
		op, msg = OpTooLarge, appendCall(scratch[:0], tooLarge(c, size))
	}
	scratch = msg[:0] // kept for the next call: no garbage per call
	out := roundTrip(op, msg)
	if err := decodeReply(op, out, obj, list, r); err != nil {
		panic("ctrl: the judge sent a malformed reply: " + err.Error())
	}
	if r.Err != nil {
		return r.Err
	}
	return nil
}

var scratch = make([]byte, 0, 4096)

func (*hostClient) Get(_ context.Context, key ObjectKey, obj Object) error {
	var r Reply
	if err := invokeInto(&Call{Op: OpGet, Kind: obj.GetObjectKind(), Key: key}, obj, nil, &r); err != nil {
		return err
	}
	return assign(obj, r.Object)
}

func (*hostClient) List(_ context.Context, list ObjectList, opts ...ListOption) error {
	var o listOptions
	for _, opt := range opts {
		// A type switch, not opt.applyToList(&o): o would escape.
		switch opt := opt.(type) {
		case InNamespace:
			opt.applyToList(&o)
		case MatchingLabels:
			opt.applyToList(&o)
		case ownedBy:
			opt.applyToList(&o)
		default: // the interface is sealed: a new option belongs above
			panic("ctrl: a ListOption this client does not know")
		}
	}
	var r Reply
	if err := invokeInto(&Call{Op: OpList, Kind: list.itemKind(), Namespace: o.namespace, Labels: o.labels, OwnerUID: o.ownerUID}, nil, list, &r); err != nil {
		return err
	}
	if !r.listed {
		return errors.New("ctrl: the judge listed an object of the wrong kind")
	}
	return nil
}

func (*hostClient) write(op Op, obj Object) error {
	if obj == nil {
		return errors.New("ctrl: nil object")
	}
	var r Reply
	if err := invokeInto(&Call{Op: op, Object: obj}, obj, nil, &r); err != nil {
		return err
	}
	return assign(obj, r.Object)
}

func (c *hostClient) Create(_ context.Context, obj Object) error { return c.write(OpCreate, obj) }
func (c *hostClient) Update(_ context.Context, obj Object) error { return c.write(OpUpdate, obj) }
func (c *hostClient) UpdateStatus(_ context.Context, obj Object) error {
	return c.write(OpUpdateStatus, obj)
}

func (*hostClient) Delete(_ context.Context, obj Object) error {
	if obj == nil {
		return errors.New("ctrl: nil object")
	}
	var r Reply
	return invoke(&Call{Op: OpDelete, Kind: obj.GetObjectKind(), Key: KeyOf(obj)}, &r)
}

// assign, which copies a reply's object into the caller's, is generated
// (kinds_gen.go).

// reconcileOnce runs the registered Reconcile for the request the judge
// names and reports the result back.
func reconcileOnce() {
	var r Reply
	if err := invoke(&Call{Op: OpRequest}, &r); err != nil {
		panic("ctrl: no request to reconcile")
	}
	if reconciler == nil {
		panic("ctrl: no Reconcile function was registered")
	}
	res, rerr := reconciler(context.Background(), &hostClient{}, r.Request)
	c := Call{Op: OpResult, RequeueAfter: res.RequeueAfter}
	if rerr != nil {
		c.HasError = true
		c.Text = cutText(rerr.Error())
		c.ErrorReason = reasonOf(rerr)
	}
	invoke(&c, &r)
}

func hostLog(b []byte) {
	if len(b) > maxTextBytes {
		b = b[:maxTextBytes]
	}
	var r Reply
	invoke(&Call{Op: OpLog, Text: string(b)}, &r)
}

func hostNow() int64 {
	var r Reply
	invoke(&Call{Op: OpNow}, &r)
	return r.Now.UnixNano()
}
