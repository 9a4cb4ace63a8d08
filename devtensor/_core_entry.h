/* devtensor._core's plan entries: the call of a plan (dt.plan, dt.planned) in C (devtensor/plan/entry.py).
 *
 * A replay entry is the ``__call__`` of a plan's class (and of the dt.planned that made the plan): it takes the
 * call when no keyword is given, no dispatch mode is on, no registration made the plan stale, the calling thread
 * holds the plan's first replica, and the arguments have the plan's signature, which it checks as the generated
 * Python entry does (binding.guard_head), rule for rule: each distinct tensor argument checked in full (exact type,
 * shape, device, dtype) only when it is not the tensor the last passing call had there with the same shape object
 * (remembered weakly, from a tensor's second call on), the same tensor where the plan had one, each scalar by type
 * and value. Then it calls the replay's body, a generated Python function of the arguments' tensors and arrays (its
 * frame is located at the step's lines, so a floating-point warning names the step's line, as eager's does), or for
 * a plan of one view of an argument that view's compiled front, or its view kernel with the spec worked out at
 * planning, whose array the entry wraps as the view lane does (``view``). Every other call goes to
 * ``general(A, K)``, the plan's Python call, which raises naming what differs; a new argument not yet checked
 * writable, or arguments sharing a storage, goes to ``slow(L, A, K)``.
 *
 * An eager entry is the ``__call__`` of a dt.planned whose plans cannot gain: the step itself with no frame in
 * between, or ``general(A, K)`` when keywords are given. */
#ifndef DEVTENSOR_CORE_ENTRY_H
#define DEVTENSOR_CORE_ENTRY_H
#include "_core_common.h"
#include <pythread.h>

typedef struct {
    Py_ssize_t leaf;
    PyObject *kind, *shape, *dtype, *device; /* the plan's (held) */
    int written;                             /* the step writes it: checked writable when new */
    PyObject *seen;                          /* a weak reference to the last tensor passed here, or NULL */
    PyObject *seen_shape;                    /* its shape object then */
    void *last;                              /* the address of the last new tensor checked (compared, never read) */
} EntryTensor;

typedef struct {
    Py_ssize_t leaf;
    PyObject *kind, *value;
    int exact; /* the value is an Exact key: also compared by scalar_key(x) */
} EntryScalar;

typedef struct {
    PyObject_HEAD
    PyObject *general;   /* general(A, K) */
    PyObject *slow;      /* slow(L, A, K); NULL for an eager entry */
    PyObject *body;      /* body(*params); an eager entry's step */
    PyObject *gen;       /* dispatcher._generation, a one-item list */
    PyObject *g;         /* the plan's generation */
    PyObject *scalar_key;
    unsigned long owner; /* the ident of the thread holding the plan's first replica; 0: none */
    Py_ssize_t nargs, ntensors, nscalars, nsame, nparams;
    EntryTensor *tensors;
    EntryScalar *scalars;
    Py_ssize_t *same;   /* pairs: leaf, first */
    Py_ssize_t *params; /* pairs: leaf, what (PARAM_TENSOR, PARAM_ARRAY, PARAM_CONST: item i of consts) */
    PyObject *structure; /* nested arguments: their structure (values.flatten's); NULL: the arguments are the leaves */
    PyObject *consts;   /* a tuple, one item per param (the PARAM_CONST ones' values) */
    PyObject *kwnames;  /* the names of the last params, passed as keywords; NULL: none */
    PyObject *view;     /* (tensor class, shape, leaf): the body (a view kernel) makes an array, wrapped here as a
                           view of the tensor of leaf view_leaf, as the view lane wraps it; NULL: the body's result */
    Py_ssize_t view_leaf;
} Entry;

enum { PARAM_TENSOR = 0, PARAM_ARRAY = 1, PARAM_CONST = 2 };

static PyTypeObject Entry_type;

static int entry_traverse(Entry *e, visitproc visit, void *arg) {
    Py_VISIT(e->general);
    Py_VISIT(e->slow);
    Py_VISIT(e->body);
    Py_VISIT(e->gen);
    Py_VISIT(e->g);
    Py_VISIT(e->scalar_key);
    Py_VISIT(e->consts);
    Py_VISIT(e->structure);
    Py_VISIT(e->kwnames);
    Py_VISIT(e->view);
    for (Py_ssize_t i = 0; i < e->ntensors; i++) {
        EntryTensor *t = &e->tensors[i];
        Py_VISIT(t->kind);
        Py_VISIT(t->shape);
        Py_VISIT(t->dtype);
        Py_VISIT(t->device);
        Py_VISIT(t->seen);
        Py_VISIT(t->seen_shape);
    }
    for (Py_ssize_t i = 0; i < e->nscalars; i++) {
        Py_VISIT(e->scalars[i].kind);
        Py_VISIT(e->scalars[i].value);
    }
    return 0;
}

static int entry_clear(Entry *e) {
    Py_CLEAR(e->general);
    Py_CLEAR(e->slow);
    Py_CLEAR(e->body);
    Py_CLEAR(e->gen);
    Py_CLEAR(e->g);
    Py_CLEAR(e->scalar_key);
    Py_CLEAR(e->consts);
    Py_CLEAR(e->structure);
    Py_CLEAR(e->kwnames);
    Py_CLEAR(e->view);
    for (Py_ssize_t i = 0; i < e->ntensors; i++) {
        EntryTensor *t = &e->tensors[i];
        Py_CLEAR(t->kind);
        Py_CLEAR(t->shape);
        Py_CLEAR(t->dtype);
        Py_CLEAR(t->device);
        Py_CLEAR(t->seen);
        Py_CLEAR(t->seen_shape);
    }
    for (Py_ssize_t i = 0; i < e->nscalars; i++) {
        Py_CLEAR(e->scalars[i].kind);
        Py_CLEAR(e->scalars[i].value);
    }
    return 0;
}

static void entry_dealloc(Entry *e) {
    PyObject_GC_UnTrack(e);
    entry_clear(e);
    PyMem_Free(e->tensors);
    PyMem_Free(e->scalars);
    PyMem_Free(e->same);
    PyMem_Free(e->params);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

/* general(A, K), K a fresh empty dict when the call had none. */
static PyObject *entry_general(Entry *e, PyObject *args, PyObject *kwargs) {
    if (kwargs != NULL) return PyObject_CallFunctionObjArgs(e->general, args, kwargs, NULL);
    PyObject *k = PyDict_New();
    if (k == NULL) return NULL;
    PyObject *r = PyObject_CallFunctionObjArgs(e->general, args, k, NULL);
    Py_DECREF(k);
    return r;
}

/* Whether a flag (modes.ACTIVE[0]) or a write check (_write_checked) is true; -1 on an error. */
static inline int entry_true(PyObject *v) {
    if (v == zero || v == Py_False) return 0;
    if (v == Py_True || v == one) return 1;
    return PyObject_IsTrue(v);
}

/* The checks of the arguments: 1 they pass (and the body may run), 0 another signature (the general call), 2 the
 * slow call (a new argument not checked writable, or arguments sharing a storage); -1 on an error. */
static int entry_check(Entry *e, PyObject *const *L, Py_ssize_t n) {
    if (n != e->nargs) return 0;
    unsigned long fresh = 0; /* (bits of the tensors checked in full: new ones; past 64, every one counts as new) */
    int any = 0;
    for (Py_ssize_t i = 0; i < e->ntensors; i++) {
        EntryTensor *c = &e->tensors[i];
        PyObject *t = L[c->leaf];
        if (c->seen != NULL && PyWeakref_GET_OBJECT(c->seen) == t && SLOT(t, off_shape) == c->seen_shape) continue;
        /* (exact type first: only then are the tensor's slots where the offsets say) */
        if ((PyObject *)Py_TYPE(t) != c->kind || !intact(t)) return 0;
        int eq = same_shape(SLOT(t, off_shape), c->shape);
        if (eq <= 0) return eq;
        if (SLOT(t, off_device) != c->device) return 0;
        PyObject *dtype = SLOT(t, off_dtype);
        if (dtype != c->dtype) {
            eq = PyObject_RichCompareBool(dtype, c->dtype, Py_EQ);
            if (eq <= 0) return eq;
        }
        if (i < 64) fresh |= 1UL << i;
        any = 1;
    }
    for (Py_ssize_t i = 0; i < e->nsame; i++)
        if (L[e->same[2 * i]] != L[e->same[2 * i + 1]]) return 0;
    for (Py_ssize_t i = 0; i < e->nscalars; i++) {
        EntryScalar *s = &e->scalars[i];
        PyObject *x = L[s->leaf];
        if ((PyObject *)Py_TYPE(x) != s->kind) return 0;
        if (x == s->value) continue;
        int eq = PyObject_RichCompareBool(x, s->value, Py_EQ);
        if (eq < 0) return -1;
        if (eq == 0 && s->exact) {
            PyObject *key = PyObject_CallOneArg(e->scalar_key, x);
            if (key == NULL) return -1;
            eq = PyObject_RichCompareBool(key, s->value, Py_EQ);
            Py_DECREF(key);
            if (eq < 0) return -1;
        }
        if (eq == 0) return 0;
    }
    if (!any) return 1;
    for (Py_ssize_t i = 0; i < e->ntensors; i++) {
        EntryTensor *c = &e->tensors[i];
        PyObject *t = L[c->leaf];
        if (!intact(t)) return 0; /* (a remembered one changed behind devtensor's back: the general call) */
        if (c->written) {
            int ok = entry_true(SLOT(t, off_checked));
            if (ok <= 0) return ok < 0 ? -1 : 2;
        }
    }
    for (Py_ssize_t i = 0; i < e->ntensors; i++) {
        PyObject *root = SLOT(SLOT(L[e->tensors[i].leaf], off_storage), off_root);
        for (Py_ssize_t j = i + 1; j < e->ntensors; j++)
            if (SLOT(SLOT(L[e->tensors[j].leaf], off_storage), off_root) == root) return 2;
    }
    for (Py_ssize_t i = 0; i < e->ntensors; i++) {
        if (i < 64 && !(fresh & (1UL << i))) continue;
        EntryTensor *c = &e->tensors[i];
        PyObject *t = L[c->leaf];
        /* (remembered from its second call on: a step called with new tensors each time, a batch, would pay a weak
           reference per call for nothing; the address only decides that, never whether a check runs) */
        if (c->last != (void *)t) {
            c->last = (void *)t;
            continue;
        }
        PyObject *ref = PyWeakref_NewRef(t, NULL);
        if (ref == NULL) return -1;
        Py_XSETREF(c->seen, ref);
        Py_INCREF(SLOT(t, off_shape));
        Py_XSETREF(c->seen_shape, SLOT(t, off_shape));
    }
    return 1;
}

#define ENTRY_MAX_PARAMS 64
#define ENTRY_MAX_LEAVES 64

/* The leaves of obj nested as node (values.flatten's structure: a leaf's index, or (type, items), a dict's items
 * (key, node) pairs in order) into L, borrowed: 1, or 0 when its nesting differs (the container types exactly,
 * their lengths, a dict's keys in order), as values.flatten_source's lines test. Keys are str (checked when made):
 * comparing them runs no Python code. */
static int entry_flatten(PyObject *node, PyObject *obj, PyObject **L) {
    if (PyLong_CheckExact(node)) {
        L[PyLong_AsSsize_t(node)] = obj;
        return 1;
    }
    PyObject *kind = PyTuple_GET_ITEM(node, 0), *items = PyTuple_GET_ITEM(node, 1);
    Py_ssize_t n = PyTuple_GET_SIZE(items);
    if ((PyObject *)Py_TYPE(obj) != kind) return 0;
    if (kind == (PyObject *)&PyDict_Type) {
        if (PyDict_GET_SIZE(obj) != n) return 0;
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        for (Py_ssize_t i = 0; i < n && PyDict_Next(obj, &pos, &key, &value); i++) {
            PyObject *item = PyTuple_GET_ITEM(items, i), *want = PyTuple_GET_ITEM(item, 0);
            if (key != want && (!PyUnicode_CheckExact(key) || PyUnicode_Compare(key, want) != 0)) return 0;
            if (!entry_flatten(PyTuple_GET_ITEM(item, 1), value, L)) return 0;
        }
        return 1;
    }
    int tuple = kind == (PyObject *)&PyTuple_Type;
    if ((tuple ? PyTuple_GET_SIZE(obj) : PyList_GET_SIZE(obj)) != n) return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!entry_flatten(PyTuple_GET_ITEM(items, i), tuple ? PyTuple_GET_ITEM(obj, i) : PyList_GET_ITEM(obj, i), L))
            return 0;
    return 1;
}

/* Whether node is a structure entry_flatten reads: leaf indices below nargs, tuples, lists and dicts with str keys;
 * counts its leaves into *count. */
static int entry_structure_ok(PyObject *node, Py_ssize_t nargs, Py_ssize_t *count) {
    if (PyLong_CheckExact(node)) {
        Py_ssize_t i = PyLong_AsSsize_t(node);
        *count += 1;
        return i >= 0 && i < nargs;
    }
    if (!PyTuple_CheckExact(node) || PyTuple_GET_SIZE(node) != 2 || !PyTuple_CheckExact(PyTuple_GET_ITEM(node, 1)))
        return 0;
    PyObject *kind = PyTuple_GET_ITEM(node, 0), *items = PyTuple_GET_ITEM(node, 1);
    int dict = kind == (PyObject *)&PyDict_Type;
    if (!dict && kind != (PyObject *)&PyTuple_Type && kind != (PyObject *)&PyList_Type) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        if (dict && (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2 ||
                     !PyUnicode_CheckExact(PyTuple_GET_ITEM(item, 0))))
            return 0;
        if (!entry_structure_ok(dict ? PyTuple_GET_ITEM(item, 1) : item, nargs, count)) return 0;
    }
    return 1;
}

static PyObject *entry_call(Entry *e, PyObject *args, PyObject *kwargs) {
    int keywords = kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0;
    if (e->slow == NULL) { /* an eager entry */
        if (keywords) return entry_general(e, args, kwargs);
        return PyObject_Call(e->body, args, NULL);
    }
    if (keywords) return entry_general(e, args, kwargs);
    int on = entry_true(PyList_GET_ITEM(active_modes, 0));
    if (on != 0) return on < 0 ? NULL : entry_general(e, args, kwargs);
    PyObject *now = PyList_GET_ITEM(e->gen, 0);
    if (now != e->g) {
        int stale = PyObject_RichCompareBool(now, e->g, Py_NE);
        if (stale != 0) return stale < 0 ? NULL : entry_general(e, args, kwargs);
    }
    if (e->owner == 0 || PyThread_get_thread_ident() != e->owner) return entry_general(e, args, kwargs);
    PyObject *const *L = &PyTuple_GET_ITEM(args, 0);
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    PyObject *leaves[ENTRY_MAX_LEAVES];
    if (e->structure != NULL) {
        if (!entry_flatten(e->structure, args, leaves)) return entry_general(e, args, kwargs);
        L = leaves;
        n = e->nargs;
    }
    int passed = entry_check(e, L, n);
    if (passed < 0) return NULL;
    if (passed == 0) return entry_general(e, args, kwargs);
    if (passed == 2) {
        PyObject *k = PyDict_New(), *list = e->structure != NULL ? PyList_New(n) : Py_NewRef(args);
        PyObject *r = NULL;
        if (k != NULL && list != NULL) {
            for (Py_ssize_t i = 0; e->structure != NULL && i < n; i++) PyList_SET_ITEM(list, i, Py_NewRef(L[i]));
            r = PyObject_CallFunctionObjArgs(e->slow, list, args, k, NULL);
        }
        Py_XDECREF(k);
        Py_XDECREF(list);
        return r;
    }
    PyObject *params[ENTRY_MAX_PARAMS];
    Py_ssize_t nkw = e->kwnames != NULL ? PyTuple_GET_SIZE(e->kwnames) : 0;
    for (Py_ssize_t i = 0; i < e->nparams; i++) {
        Py_ssize_t what = e->params[2 * i + 1];
        if (what == PARAM_CONST) {
            params[i] = PyTuple_GET_ITEM(e->consts, i);
            continue;
        }
        PyObject *t = L[e->params[2 * i]];
        params[i] = what == PARAM_ARRAY ? SLOT(t, off_array) : t;
        if (params[i] == NULL) return entry_general(e, args, kwargs); /* (an attribute deleted: Python raises) */
    }
    PyObject *r = PyObject_Vectorcall(e->body, params, e->nparams - nkw, e->kwnames);
    if (r == NULL || e->view == NULL) return r;
    PyObject *base = L[e->view_leaf];
    return wrap_view((PyTypeObject *)PyTuple_GET_ITEM(e->view, 0), r, base, PyTuple_GET_ITEM(e->view, 1),
                     SLOT(base, off_dtype));
}

static PyObject *entry_get_owner(Entry *e, void *closure) { return PyLong_FromUnsignedLong(e->owner); }

static int entry_set_owner(Entry *e, PyObject *value, void *closure) {
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "Entry.owner cannot be deleted");
        return -1;
    }
    unsigned long owner = PyLong_AsUnsignedLong(value);
    if (owner == (unsigned long)-1 && PyErr_Occurred()) return -1;
    e->owner = owner;
    return 0;
}

static PyObject *entry_get_general(Entry *e, void *closure) { return Py_NewRef(e->general); }

static int entry_set_general(Entry *e, PyObject *value, void *closure) {
    if (value == NULL || !PyCallable_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "Entry.general must be a callable");
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(e->general, value);
    return 0;
}

static PyObject *entry_get_body(Entry *e, void *closure) { return Py_NewRef(e->body); }

static PyObject *entry_get_view(Entry *e, void *closure) { return Py_NewRef(e->view ? e->view : Py_None); }

static PyGetSetDef entry_getset[] = {
    {"owner", (getter)entry_get_owner, (setter)entry_set_owner,
     "the ident of the thread holding the plan's first replica (threading.get_ident()); 0: none", NULL},
    {"general", (getter)entry_get_general, (setter)entry_set_general, "general(A, K): the calls not taken", NULL},
    {"body", (getter)entry_get_body, NULL, "the replay's body (an eager entry: the step)", NULL},
    {"view", (getter)entry_get_view, NULL, "(tensor class, shape, leaf): the body's array wrapped as a view; or None",
     NULL},
    {NULL},
};

static PyTypeObject Entry_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "devtensor._core.Entry",
    .tp_basicsize = sizeof(Entry),
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_call = (ternaryfunc)entry_call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A plan's call in C (devtensor/plan/entry.py); made by replay_entry() or eager_entry().",
    .tp_traverse = (traverseproc)entry_traverse,
    .tp_clear = (inquiry)entry_clear,
    .tp_getset = entry_getset,
};

static Entry *entry_new(PyObject *general, PyObject *body) {
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "Entry: call setup first");
        return NULL;
    }
    if (!PyCallable_Check(general) || !PyCallable_Check(body)) {
        PyErr_SetString(PyExc_TypeError, "Entry: general and body must be callables");
        return NULL;
    }
    Entry *e = PyObject_GC_New(Entry, &Entry_type);
    if (e == NULL) return NULL;
    e->general = Py_NewRef(general);
    e->body = Py_NewRef(body);
    e->slow = e->gen = e->g = e->scalar_key = NULL;
    e->owner = 0;
    e->nargs = e->ntensors = e->nscalars = e->nsame = e->nparams = 0;
    e->tensors = NULL;
    e->scalars = NULL;
    e->same = e->params = NULL;
    e->consts = e->kwnames = e->structure = e->view = NULL;
    e->view_leaf = 0;
    return e;
}

/* eager_entry(step, general) */
static PyObject *core_eager_entry(PyObject *module, PyObject *args) {
    PyObject *step, *general;
    if (!PyArg_ParseTuple(args, "OO:eager_entry", &step, &general)) return NULL;
    Entry *e = entry_new(general, step);
    if (e != NULL) PyObject_GC_Track(e);
    return (PyObject *)e;
}

/* Item i of tuple t as a Py_ssize_t; -1 with an error set when it is no int. */
static Py_ssize_t entry_index(PyObject *t, Py_ssize_t i, Py_ssize_t nargs) {
    Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v >= nargs) {
        PyErr_SetString(PyExc_ValueError, "replay_entry: a leaf index out of range");
        return -1;
    }
    return v;
}

static int entry_spec(PyObject *spec, Py_ssize_t size, const char *what) {
    if (!PyTuple_CheckExact(spec) || PyTuple_GET_SIZE(spec) != size) {
        PyErr_Format(PyExc_TypeError, "replay_entry: each %s must be a tuple of %zd items", what, size);
        return -1;
    }
    return 0;
}

/* replay_entry(general, slow, body, generation_list, generation, nargs, tensors, scalars, same, params, scalar_key,
 *              kwnames, structure[, view])
 * tensors: (leaf, type, shape, dtype, device, written) each; scalars: (leaf, type, value, exact); same: (leaf,
 * first); params: (leaf, what, value): the leaf's tensor (what 0) or its array (1), or value (2); kwnames: the names
 * of the last params, passed as keywords (a tuple of str), or None; structure: the arguments' nesting
 * (values.flatten's, str dict keys), or None when they are the leaves; view: (tensor class, shape, leaf) when the
 * body is a view kernel whose array the entry wraps as a view of that (checked tensor) leaf, or None. */
static PyObject *core_replay_entry(PyObject *module, PyObject *args) {
    PyObject *general, *slow, *body, *gen, *g, *tensors, *scalars, *same, *params, *scalar_key, *kwnames, *structure;
    PyObject *view = Py_None;
    Py_ssize_t nargs;
    if (!PyArg_ParseTuple(args, "OOOO!OnO!O!O!O!OOO|O:replay_entry", &general, &slow, &body, &PyList_Type, &gen, &g,
                          &nargs, &PyTuple_Type, &tensors, &PyTuple_Type, &scalars, &PyTuple_Type, &same, &PyTuple_Type,
                          &params, &scalar_key, &kwnames, &structure, &view))
        return NULL;
    if (view != Py_None && (!PyTuple_CheckExact(view) || PyTuple_GET_SIZE(view) != 3 ||
                            !PyType_Check(PyTuple_GET_ITEM(view, 0)) ||
                            !PyType_IsSubtype((PyTypeObject *)PyTuple_GET_ITEM(view, 0), Tensor_type) ||
                            !PyTuple_CheckExact(PyTuple_GET_ITEM(view, 1)))) {
        PyErr_SetString(PyExc_TypeError, "replay_entry: view must be None or (a Tensor class, a shape tuple, a leaf)");
        return NULL;
    }
    Py_ssize_t count = 0;
    if (structure != Py_None && (nargs > ENTRY_MAX_LEAVES || !entry_structure_ok(structure, nargs, &count) ||
                                 count != nargs || PyTuple_GET_ITEM(structure, 0) != (PyObject *)&PyTuple_Type)) {
        PyErr_SetString(PyExc_ValueError, "replay_entry: a structure of tuples, lists and str-keyed dicts, at most 64 "
                                          "leaves, is read in C");
        return NULL;
    }
    if (kwnames != Py_None) {
        int ok = PyTuple_CheckExact(kwnames) && PyTuple_GET_SIZE(kwnames) <= PyTuple_GET_SIZE(params);
        for (Py_ssize_t i = 0; ok && i < PyTuple_GET_SIZE(kwnames); i++) ok = PyUnicode_CheckExact(PyTuple_GET_ITEM(kwnames, i));
        if (!ok) {
            PyErr_SetString(PyExc_TypeError, "replay_entry: kwnames must be None or a tuple of str, one per last param");
            return NULL;
        }
    }
    if (PyList_GET_SIZE(gen) != 1 || PyTuple_GET_SIZE(params) > ENTRY_MAX_PARAMS) {
        PyErr_SetString(PyExc_ValueError, "replay_entry: a one-item generation list, at most 64 params");
        return NULL;
    }
    Entry *e = entry_new(general, body);
    if (e == NULL) return NULL;
    e->slow = Py_NewRef(slow);
    e->gen = Py_NewRef(gen);
    e->g = Py_NewRef(g);
    e->scalar_key = Py_NewRef(scalar_key);
    e->structure = structure == Py_None ? NULL : Py_NewRef(structure);
    e->kwnames = kwnames == Py_None || PyTuple_GET_SIZE(kwnames) == 0 ? NULL : Py_NewRef(kwnames);
    e->consts = PyTuple_New(PyTuple_GET_SIZE(params));
    if (e->consts == NULL) goto fail;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(params); i++) PyTuple_SET_ITEM(e->consts, i, Py_NewRef(Py_None));
    e->nargs = nargs;
    Py_ssize_t nt = PyTuple_GET_SIZE(tensors), ns = PyTuple_GET_SIZE(scalars);
    Py_ssize_t nsame = PyTuple_GET_SIZE(same), np = PyTuple_GET_SIZE(params);
    e->tensors = PyMem_Calloc(nt ? nt : 1, sizeof(EntryTensor));
    e->scalars = PyMem_Calloc(ns ? ns : 1, sizeof(EntryScalar));
    e->same = PyMem_Calloc(2 * nsame + 1, sizeof(Py_ssize_t));
    e->params = PyMem_Calloc(2 * np + 1, sizeof(Py_ssize_t));
    if (!e->tensors || !e->scalars || !e->same || !e->params) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < nt; i++, e->ntensors++) {
        PyObject *s = PyTuple_GET_ITEM(tensors, i);
        if (entry_spec(s, 6, "tensor") < 0) goto fail;
        EntryTensor *c = &e->tensors[i];
        if ((c->leaf = entry_index(s, 0, nargs)) < 0) goto fail;
        PyObject *kind = PyTuple_GET_ITEM(s, 1);
        if (!PyType_Check(kind) || !PyType_IsSubtype((PyTypeObject *)kind, Tensor_type)) {
            PyErr_SetString(PyExc_TypeError, "replay_entry: a tensor's type must be a Tensor class");
            goto fail;
        }
        c->kind = Py_NewRef(kind);
        c->shape = Py_NewRef(PyTuple_GET_ITEM(s, 2));
        c->dtype = Py_NewRef(PyTuple_GET_ITEM(s, 3));
        c->device = Py_NewRef(PyTuple_GET_ITEM(s, 4));
        if ((c->written = PyObject_IsTrue(PyTuple_GET_ITEM(s, 5))) < 0) goto fail;
    }
    for (Py_ssize_t i = 0; i < ns; i++, e->nscalars++) {
        PyObject *s = PyTuple_GET_ITEM(scalars, i);
        if (entry_spec(s, 4, "scalar") < 0) goto fail;
        EntryScalar *c = &e->scalars[i];
        if ((c->leaf = entry_index(s, 0, nargs)) < 0) goto fail;
        c->kind = Py_NewRef(PyTuple_GET_ITEM(s, 1));
        c->value = Py_NewRef(PyTuple_GET_ITEM(s, 2));
        if ((c->exact = PyObject_IsTrue(PyTuple_GET_ITEM(s, 3))) < 0) goto fail;
    }
    for (Py_ssize_t i = 0; i < nsame; i++, e->nsame++) {
        PyObject *s = PyTuple_GET_ITEM(same, i);
        if (entry_spec(s, 2, "same pair") < 0) goto fail;
        if ((e->same[2 * i] = entry_index(s, 0, nargs)) < 0 || (e->same[2 * i + 1] = entry_index(s, 1, nargs)) < 0)
            goto fail;
    }
    for (Py_ssize_t i = 0; i < np; i++, e->nparams++) {
        PyObject *s = PyTuple_GET_ITEM(params, i);
        if (entry_spec(s, 3, "param") < 0) goto fail;
        Py_ssize_t what = PyLong_AsSsize_t(PyTuple_GET_ITEM(s, 1));
        if (what == -1 && PyErr_Occurred()) goto fail;
        if (what < PARAM_TENSOR || what > PARAM_CONST) {
            PyErr_SetString(PyExc_ValueError, "replay_entry: a param is a tensor (0), an array (1) or a value (2)");
            goto fail;
        }
        e->params[2 * i + 1] = what;
        if (what == PARAM_CONST) {
            PyObject *old = PyTuple_GET_ITEM(e->consts, i);
            PyTuple_SET_ITEM(e->consts, i, Py_NewRef(PyTuple_GET_ITEM(s, 2)));
            Py_DECREF(old);
            continue;
        }
        if ((e->params[2 * i] = entry_index(s, 0, nargs)) < 0) goto fail;
        /* (a param must be a tensor argument: its slots are read unchecked) */
        int found = 0;
        for (Py_ssize_t j = 0; j < e->ntensors; j++) found |= e->tensors[j].leaf == e->params[2 * i];
        if (!found) {
            PyErr_SetString(PyExc_ValueError, "replay_entry: a param must be a checked tensor argument");
            goto fail;
        }
    }
    if (view != Py_None) {
        if ((e->view_leaf = entry_index(view, 2, nargs)) < 0) goto fail;
        int found = 0; /* (the view's base must be a checked tensor argument too: its slots are read unchecked) */
        for (Py_ssize_t j = 0; j < e->ntensors; j++) found |= e->tensors[j].leaf == e->view_leaf;
        if (!found) {
            PyErr_SetString(PyExc_ValueError, "replay_entry: a view's base must be a checked tensor argument");
            goto fail;
        }
        e->view = Py_NewRef(view);
    }
    PyObject_GC_Track(e);
    return (PyObject *)e;
fail:
    PyObject_GC_Track(e);
    Py_DECREF(e);
    return NULL;
}

#endif
