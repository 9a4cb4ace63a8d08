/* devtensor._core: the compiled lanes of the elementwise fronts.
 *
 * A Front wraps the Python front of one elementwise op variant (devtensor.structured.fronts.generate_front) and
 * takes the commonest calls without leaving C: no dispatch mode, tensors of one device with no guard, the meta
 * answer found in the op's inline entries (the same tuples and dict the Python front reads), the built-in kernel
 * as the handler, and no out= or an out= / inplace self that fits exactly. Every other call, and every call whose
 * answer is not settled by those tests, goes to the Python front unchanged (vectorcall forwarding: same
 * arguments, same keywords), which applies the rules (devtensor.structured.rules) in full. The lanes mirror the
 * Python fronts' own lanes test for test; tests/test_compiled_core.py runs the op samples through both.
 *
 * Tensor and Storage fields are read and written through their __slots__ offsets, found at setup() from the
 * classes' member descriptors, so this file never names a field's position.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#ifndef DEVTENSOR_CORE_FINGERPRINT
#define DEVTENSOR_CORE_FINGERPRINT "unknown"
#endif

/* ---- set once by setup() ---- */
static PyTypeObject *Tensor_type = NULL;
static PyTypeObject *Storage_type = NULL;
static Py_ssize_t off_array, off_device, off_storage, off_shape, off_dtype, off_checked;
static Py_ssize_t off_root, off_version, off_guard, off_key;
static PyObject *active_modes = NULL;   /* devtensor.modes.ACTIVE: a one-item list, nonzero while a mode is on */
static PyObject *alloc_failed = NULL;   /* rules.alloc_failed(name, spec, error, device): raises */
static PyObject *check_writable = NULL; /* rules.check_writable(name, arg, tensor): raises if not writable */
static PyObject *written_then_raised = NULL; /* rules.written_then_raised(tensor, array) */
static PyObject *kw_order = NULL, *kw_out = NULL, *str_C = NULL, *str_out = NULL, *str_self = NULL;
static PyObject *zero = NULL, *one = NULL;
static int ready = 0;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

static inline int is_tensor(PyObject *o) { return PyObject_TypeCheck(o, Tensor_type); }

/* FORWARD: no lane, every call goes to the Python front. UNARY, BINARY: the elementwise lanes. The MEMO_* kinds
 * (devtensor.structured.front_lines.memo_lane): a functional call whose meta result the op's memo holds and whose
 * direct call allocates the result. */
enum { FORWARD = 0, UNARY = 1, BINARY = 2, MEMO_REDUCE = 3, MEMO_INT = 4, MEMO_ARRAYS = 5, MEMO_SCALARS = 6, MEMO_LIST = 7,
       UNARY_CALL = 8 };
/* REFLECTED: a binary functional front called as a reflected operator (2 - t is sub(2, t)) */
enum { FUNCTIONAL = 1, INPLACE = 2, REFLECTED = 3 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;
    PyObject *weakrefs;
    PyObject *python;     /* the Python front: every call the lanes do not take; NULL until first needed */
    PyObject *builder;    /* builder() -> the Python front (called once, on the first call the lanes leave) */
    PyObject *name;       /* the op's name as errors give it ("add", "add_") */
    PyObject *entries;    /* BINARY: the inline meta entries (list of tuples); UNARY: dtype -> result dtype */
    PyObject *direct;     /* (the built-in kernel, the ufunc, ...) */
    PyObject *handlers;   /* the op's KernelTable.handlers: key -> handler */
    PyObject *specs;      /* MEMO_*: the meta's memo of results (meta.SHAPE_MEMO), read as the Python front does */
    PyObject *defaults;   /* MEMO_REDUCE: (has a dim default, dim's, keepdim's); MEMO_SCALARS: the numbers' */
    PyObject *last_key;   /* MEMO_*: the key looked up last and its spec (a spec is a pure function of its key) */
    PyObject *last_spec;
    PyObject *last_type;  /* the tensor class last seen by a MEMO lane, and its backend's tensor_class */
    PyObject *last_class;
    int arity;
    int variant;
    int fresh;            /* MEMO_*: meta.FRESH_C (0: the result's layout is tested) */
} Front;

/* A fresh field value v of slot off of obj (steals v). */
static inline void set_slot(PyObject *obj, Py_ssize_t off, PyObject *v) {
    PyObject *old = SLOT(obj, off);
    SLOT(obj, off) = v;
    Py_XDECREF(old);
}

static inline PyObject *direct_item(Front *f, Py_ssize_t i);

/* The handler cached for device's key is the op's built-in direct kernel, and the device has no guard. */
static int plain_device(Front *f, PyObject *device) {
    PyObject *guard = SLOT(device, off_guard);
    if (guard != Py_None) return 0;
    PyObject *key = SLOT(device, off_key);
    if (key == NULL) return 0;
    PyObject *handler = PyDict_GetItemWithError(f->handlers, key); /* borrowed */
    if (handler == NULL) {
        PyErr_Clear();
        return 0;
    }
    return handler == direct_item(f, 0);
}

/* A Python number the entry accepts as it is: entry[type_at] is its exact type, float, or int within the entry's
 * window (entry[3] false, or entry[5] <= value <= entry[6]). -1 on an error. */
static int scalar_fits(PyObject *entry, Py_ssize_t type_at, PyObject *value) {
    PyObject *t = PyTuple_GET_ITEM(entry, type_at);
    if ((PyObject *)Py_TYPE(value) != t) return 0;
    if (t == (PyObject *)&PyFloat_Type) return 1;
    if (t != (PyObject *)&PyLong_Type) return 0;
    int windowed = PyObject_IsTrue(PyTuple_GET_ITEM(entry, 3));
    if (windowed <= 0) return windowed == 0 ? 1 : -1;
    int lo = PyObject_RichCompareBool(PyTuple_GET_ITEM(entry, 5), value, Py_LE);
    if (lo <= 0) return lo;
    return PyObject_RichCompareBool(value, PyTuple_GET_ITEM(entry, 6), Py_LE);
}

/* entries[i] when it is a tuple of at least n items, else NULL (no lane). Borrowed. */
static inline PyObject *entry_at(PyObject *entries, Py_ssize_t i, Py_ssize_t n) {
    if (!PyList_Check(entries) || PyList_GET_SIZE(entries) <= i) return NULL;
    PyObject *e = PyList_GET_ITEM(entries, i);
    return (PyTuple_Check(e) && PyTuple_GET_SIZE(e) >= n) ? e : NULL;
}

static inline int same_shape(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    return PyObject_RichCompareBool(a, b, Py_EQ);
}

/* The ufunc's result for a functional call: NumPy allocates; C order for 2 or more dims; an array (not a
 * scalar) for 0-d results, as the Python front's lane asks. */
static PyObject *call_allocating(PyObject *ufunc, PyObject **argv, Py_ssize_t n, PyObject *shape) {
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    PyObject *args[3];
    for (Py_ssize_t i = 0; i < n; i++) args[i] = argv[i];
    if (ndim == 1) return PyObject_Vectorcall(ufunc, args, n, NULL);
    args[n] = ndim ? str_C : Py_Ellipsis;
    return PyObject_Vectorcall(ufunc, args, n, ndim ? kw_order : kw_out);
}

/* A fresh tensor of class cls over array (as the Python lane makes it: a new Storage record, version 0, checked
 * writable). Steals array. */
static PyObject *wrap(PyTypeObject *cls, PyObject *array, PyObject *device, PyObject *shape, PyObject *dtype) {
    PyObject *storage = Storage_type->tp_alloc(Storage_type, 0);
    if (storage == NULL) {
        Py_DECREF(array);
        return NULL;
    }
    PyObject *result = cls->tp_alloc(cls, 0);
    if (result == NULL) {
        Py_DECREF(storage);
        Py_DECREF(array);
        return NULL;
    }
    Py_INCREF(array);
    set_slot(storage, off_root, array);
    Py_INCREF(zero);
    set_slot(storage, off_version, zero);
    set_slot(result, off_array, array);
    Py_INCREF(device);
    set_slot(result, off_device, device);
    set_slot(result, off_storage, storage);
    Py_INCREF(shape);
    set_slot(result, off_shape, shape);
    Py_INCREF(dtype);
    set_slot(result, off_dtype, dtype);
    Py_INCREF(Py_True);
    set_slot(result, off_checked, Py_True);
    return result;
}

/* The allocating call failed: a ValueError or MemoryError is the allocating path's error (rules.alloc_failed
 * raises it, naming the op, shape, dtype and device); anything else propagates. */
static PyObject *allocation_error(Front *f, PyObject *shape, PyObject *dtype, PyObject *device) {
    if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_MemoryError)) return NULL;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL) PyException_SetTraceback(value, tb);
    PyObject *spec = PyTuple_Pack(2, shape, dtype);
    PyObject *r = spec ? PyObject_CallFunctionObjArgs(alloc_failed, f->name, spec, value, device, NULL) : NULL;
    Py_XDECREF(spec);
    Py_XDECREF(r);
    if (r != NULL) PyErr_Restore(type, value, tb); /* (it always raises; keep the original if it did not) */
    else {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    return NULL;
}

/* A write into target's array (an out or an inplace self named arg) raised: a ValueError is checked into the
 * read-only error first (rules.check_writable); a floating-point condition made an error leaves the result
 * written and the version bumped (rules.written_then_raised). The original error is raised again unless the
 * check raised its own, which then carries it as __context__, as in the Python front. */
static PyObject *write_error(Front *f, PyObject *arg, PyObject *target) {
    PyObject *type, *value, *tb;
    int is_value = PyErr_ExceptionMatches(PyExc_ValueError);
    int is_condition = PyErr_ExceptionMatches(PyExc_Warning) || PyErr_ExceptionMatches(PyExc_FloatingPointError);
    if (!is_value && !is_condition) return NULL;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL) PyException_SetTraceback(value, tb);
    PyObject *r;
    if (is_value) r = PyObject_CallFunctionObjArgs(check_writable, f->name, arg, target, NULL);
    else r = PyObject_CallFunctionObjArgs(written_then_raised, target, SLOT(target, off_array), NULL);
    if (r != NULL) {
        Py_DECREF(r);
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    PyObject *t2, *v2, *tb2;
    PyErr_Fetch(&t2, &v2, &tb2);
    PyErr_NormalizeException(&t2, &v2, &tb2);
    if (tb2 != NULL) PyException_SetTraceback(v2, tb2);
    PyException_SetContext(v2, value); /* steals value */
    Py_XDECREF(type);
    Py_XDECREF(tb);
    PyErr_Restore(t2, v2, tb2);
    return NULL;
}

/* version += 1 on target's storage record. */
static int bump(PyObject *target) {
    PyObject *storage = SLOT(target, off_storage);
    PyObject *version = storage ? SLOT(storage, off_version) : NULL;
    if (version == NULL) {
        PyErr_SetString(PyExc_AttributeError, "version");
        return -1;
    }
    PyObject *next = PyNumber_Add(version, one);
    if (next == NULL) return -1;
    set_slot(storage, off_version, next);
    return 0;
}

#define FALLBACK ((PyObject *)1)

/* direct[i] (a list or tuple: the built-in kernel, the ufunc, ...), borrowed; NULL when it has no such item. */
static inline PyObject *direct_item(Front *f, Py_ssize_t i) {
    PyObject *d = f->direct;
    if (PyList_Check(d)) return PyList_GET_SIZE(d) > i ? PyList_GET_ITEM(d, i) : NULL;
    if (PyTuple_Check(d)) return PyTuple_GET_SIZE(d) > i ? PyTuple_GET_ITEM(d, i) : NULL;
    return NULL;
}

/* ---- the lanes: each returns a new reference, NULL with an error set, or FALLBACK ---- */

static PyObject *binary_functional(Front *f, PyObject *self, PyObject *other, PyObject *out) {
    PyObject *entries = f->entries, *entry, *device, *argv[2];
    int fits;
    if (is_tensor(self)) {
        device = SLOT(self, off_device);
        if (is_tensor(other)) {
            if ((entry = entry_at(entries, 0, 3)) == NULL) return FALLBACK;
            if (SLOT(other, off_dtype) != PyTuple_GET_ITEM(entry, 1)) {
                /* (the entry before: x * y beside x * mask) */
                if ((entry = entry_at(entries, 3, 3)) == NULL) return FALLBACK;
            }
            if (SLOT(other, off_device) != device || SLOT(other, off_dtype) != PyTuple_GET_ITEM(entry, 1))
                return FALLBACK;
            if ((fits = same_shape(SLOT(self, off_shape), SLOT(other, off_shape))) <= 0)
                return fits < 0 ? NULL : FALLBACK;
            if (out != NULL && SLOT(SLOT(other, off_storage), off_root) == SLOT(SLOT(out, off_storage), off_root))
                return FALLBACK;
            argv[1] = SLOT(other, off_array);
        } else {
            if ((entry = entry_at(entries, 1, 7)) == NULL) return FALLBACK;
            if ((fits = scalar_fits(entry, 1, other)) <= 0) return fits < 0 ? NULL : FALLBACK;
            argv[1] = other;
        }
        if (SLOT(self, off_dtype) != PyTuple_GET_ITEM(entry, 0)) return FALLBACK;
        argv[0] = SLOT(self, off_array);
    } else if (is_tensor(other) && out == NULL) {
        device = SLOT(other, off_device);
        if ((entry = entry_at(entries, 2, 7)) == NULL) return FALLBACK;
        if ((fits = scalar_fits(entry, 0, self)) <= 0) return fits < 0 ? NULL : FALLBACK;
        if (SLOT(other, off_dtype) != PyTuple_GET_ITEM(entry, 1)) return FALLBACK;
        argv[0] = self;
        argv[1] = SLOT(other, off_array);
    } else {
        return FALLBACK;
    }
    PyObject *dtype = PyTuple_GET_ITEM(entry, 2);
    PyObject *ufunc = direct_item(f, 1);
    if (out == NULL) {
        if (!plain_device(f, device)) return FALLBACK;
        PyObject *tensor = is_tensor(self) ? self : other;
        PyObject *shape = SLOT(tensor, off_shape);
        PyObject *array = call_allocating(ufunc, argv, 2, shape);
        if (array == NULL) return allocation_error(f, shape, dtype, device);
        return wrap(Py_TYPE(tensor), array, device, shape, dtype);
    }
    /* out=: exactly the result's device, shape and dtype, checked writable, sharing no root with an input */
    if (SLOT(out, off_dtype) != dtype || SLOT(out, off_device) != device) return FALLBACK;
    if ((fits = same_shape(SLOT(out, off_shape), SLOT(self, off_shape))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if ((fits = PyObject_IsTrue(SLOT(out, off_checked))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if (SLOT(SLOT(self, off_storage), off_root) == SLOT(SLOT(out, off_storage), off_root)) return FALLBACK;
    if (!plain_device(f, device)) return FALLBACK;
    PyObject *args[3] = {argv[0], argv[1], SLOT(out, off_array)};
    PyObject *r = PyObject_Vectorcall(ufunc, args, 2, kw_out);
    if (r == NULL) return write_error(f, str_out, out);
    Py_DECREF(r);
    if (bump(out) < 0) return NULL;
    Py_INCREF(out);
    return out;
}

static PyObject *binary_inplace(Front *f, PyObject *self, PyObject *other) {
    PyObject *entries = f->entries, *entry, *value;
    int fits;
    if (!is_tensor(self)) return FALLBACK;
    PyObject *device = SLOT(self, off_device);
    if (is_tensor(other)) {
        if ((entry = entry_at(entries, 0, 3)) == NULL) return FALLBACK;
        if (SLOT(other, off_dtype) != PyTuple_GET_ITEM(entry, 1)) {
            if ((entry = entry_at(entries, 3, 3)) == NULL) return FALLBACK;
        }
        if (SLOT(other, off_device) != device || SLOT(other, off_dtype) != PyTuple_GET_ITEM(entry, 1))
            return FALLBACK;
        if ((fits = same_shape(SLOT(self, off_shape), SLOT(other, off_shape))) <= 0)
            return fits < 0 ? NULL : FALLBACK;
        /* (self passed again is allowed: the elementwise ops write over their input) */
        if (other != self && SLOT(SLOT(other, off_storage), off_root) == SLOT(SLOT(self, off_storage), off_root))
            return FALLBACK;
        value = SLOT(other, off_array);
    } else {
        if ((entry = entry_at(entries, 1, 7)) == NULL) return FALLBACK;
        if ((fits = scalar_fits(entry, 1, other)) <= 0) return fits < 0 ? NULL : FALLBACK;
        value = other;
    }
    PyObject *dtype = SLOT(self, off_dtype);
    if (dtype != PyTuple_GET_ITEM(entry, 0) || dtype != PyTuple_GET_ITEM(entry, 2)) return FALLBACK;
    if ((fits = PyObject_IsTrue(SLOT(self, off_checked))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if (!plain_device(f, device)) return FALLBACK;
    PyObject *array = SLOT(self, off_array);
    PyObject *args[3] = {array, value, array};
    PyObject *r = PyObject_Vectorcall(direct_item(f, 1), args, 2, kw_out);
    if (r == NULL) return write_error(f, str_self, self);
    Py_DECREF(r);
    if (bump(self) < 0) return NULL;
    Py_INCREF(self);
    return self;
}

/* The result dtype cached for a unary op's input dtype (borrowed), or NULL. */
static inline PyObject *unary_dtype(Front *f, PyObject *dtype) {
    if (!PyDict_Check(f->entries)) return NULL;
    PyObject *r = PyDict_GetItemWithError(f->entries, dtype);
    if (r == NULL) PyErr_Clear();
    return r == Py_None ? NULL : r;
}

static PyObject *unary_functional(Front *f, PyObject *self, PyObject *out) {
    int fits;
    if (!is_tensor(self)) return FALLBACK;
    PyObject *device = SLOT(self, off_device);
    PyObject *dtype = unary_dtype(f, SLOT(self, off_dtype));
    if (dtype == NULL) return FALLBACK;
    PyObject *ufunc = direct_item(f, 1);
    PyObject *argv[1] = {SLOT(self, off_array)};
    if (out == NULL) {
        if (!plain_device(f, device)) return FALLBACK;
        PyObject *shape = SLOT(self, off_shape);
        PyObject *array = call_allocating(ufunc, argv, 1, shape);
        if (array == NULL) return allocation_error(f, shape, dtype, device);
        return wrap(Py_TYPE(self), array, device, shape, dtype);
    }
    if (SLOT(out, off_dtype) != dtype || SLOT(out, off_device) != device) return FALLBACK;
    if ((fits = same_shape(SLOT(out, off_shape), SLOT(self, off_shape))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if ((fits = PyObject_IsTrue(SLOT(out, off_checked))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if (SLOT(SLOT(self, off_storage), off_root) == SLOT(SLOT(out, off_storage), off_root)) return FALLBACK;
    if (!plain_device(f, device)) return FALLBACK;
    PyObject *args[2] = {argv[0], SLOT(out, off_array)};
    PyObject *r = PyObject_Vectorcall(ufunc, args, 1, kw_out);
    if (r == NULL) return write_error(f, str_out, out);
    Py_DECREF(r);
    if (bump(out) < 0) return NULL;
    Py_INCREF(out);
    return out;
}

static PyObject *unary_inplace(Front *f, PyObject *self) {
    int fits;
    if (!is_tensor(self)) return FALLBACK;
    PyObject *dtype = SLOT(self, off_dtype);
    if (unary_dtype(f, dtype) != dtype) return FALLBACK;
    if ((fits = PyObject_IsTrue(SLOT(self, off_checked))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if (!plain_device(f, SLOT(self, off_device))) return FALLBACK;
    PyObject *array = SLOT(self, off_array);
    PyObject *args[2] = {array, array};
    PyObject *r = PyObject_Vectorcall(direct_item(f, 1), args, 2, NULL);
    if (r == NULL) return write_error(f, str_self, self);
    Py_DECREF(r);
    if (bump(self) < 0) return NULL;
    Py_INCREF(self);
    return self;
}


/* The class of a result the allocating path makes for a call whose first tensor is `first`: its backend's
 * tensor_class (cached per tensor class). Borrowed. */
static PyObject *result_class(Front *f, PyObject *first) {
    PyObject *type = (PyObject *)Py_TYPE(first);
    if (type == f->last_type && f->last_class != NULL) return f->last_class;
    PyObject *backend = PyObject_GetAttrString(type, "_backend");
    if (backend == NULL) return NULL;
    PyObject *cls = PyObject_GetAttrString(backend, "tensor_class");
    Py_DECREF(backend);
    if (cls == NULL) return NULL;
    if (!PyType_Check(cls)) {
        Py_DECREF(cls);
        PyErr_SetString(PyExc_TypeError, "devtensor._core: a backend's tensor_class is not a class");
        return NULL;
    }
    Py_INCREF(type);
    Py_XSETREF(f->last_type, type);
    Py_XSETREF(f->last_class, cls);
    return cls;
}

/* array.flags.c_contiguous. -1 on an error. */
static int c_contiguous(PyObject *array) {
    PyObject *flags = PyObject_GetAttrString(array, "flags");
    if (flags == NULL) return -1;
    PyObject *c = PyObject_GetAttrString(flags, "c_contiguous");
    Py_DECREF(flags);
    if (c == NULL) return -1;
    int r = PyObject_IsTrue(c);
    Py_DECREF(c);
    return r;
}

/* The spec the memo holds for the key (items[0], ..., items[n-1]) (borrowed), NULL when none (or on an error, then
 * set). The key looked up last is compared item by item first (identity, else equality: shapes and ints), which
 * spares building and hashing the tuple in a loop of one call. */
static PyObject *memo_spec(Front *f, PyObject **items, Py_ssize_t n) {
    PyObject *last = f->last_key;
    if (last != NULL && PyTuple_GET_SIZE(last) == n) {
        Py_ssize_t i = 0;
        for (; i < n; i++) {
            PyObject *a = PyTuple_GET_ITEM(last, i), *b = items[i];
            if (a == b) continue;
            if (Py_TYPE(a) != Py_TYPE(b) || !(PyTuple_CheckExact(a) || PyLong_CheckExact(a))) break;
            int eq = PyObject_RichCompareBool(a, b, Py_EQ);
            if (eq < 0) return NULL;
            if (!eq) break;
        }
        if (i == n) return f->last_spec;
    }
    PyObject *key = PyTuple_New(n);
    if (key == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(items[i]);
        PyTuple_SET_ITEM(key, i, items[i]);
    }
    PyObject *spec = PyDict_GetItemWithError(f->specs, key);
    if (spec == NULL || !PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 2) {
        Py_DECREF(key);
        return NULL;
    }
    Py_INCREF(spec);
    Py_XSETREF(f->last_key, key);
    Py_XSETREF(f->last_spec, spec);
    return spec;
}

/* The result the direct call made (steals array), wrapped as the allocating path wraps it: the backend's tensor
 * class, the spec's shape, the array's dtype. On a failed call, the allocating path's error. */
static PyObject *memo_result(Front *f, PyObject *array, PyObject *first, PyObject *spec, PyObject *device) {
    if (array == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_MemoryError)) return NULL;
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (tb != NULL) PyException_SetTraceback(value, tb);
        PyObject *r = PyObject_CallFunctionObjArgs(alloc_failed, f->name, spec, value, device, NULL);
        if (r != NULL) {
            Py_DECREF(r);
            PyErr_Restore(type, value, tb);
        } else {
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        }
        return NULL;
    }
    PyObject *cls = result_class(f, first);
    PyObject *dtype = cls ? PyObject_GetAttrString(array, "dtype") : NULL;
    if (dtype == NULL) {
        Py_DECREF(array);
        return NULL;
    }
    PyObject *r = wrap((PyTypeObject *)cls, array, device, PyTuple_GET_ITEM(spec, 0), dtype);
    Py_DECREF(dtype);
    return r;
}

/* cat(tensors, dim): a list of tensors of one device and an int dim (default: defaults[0]), the meta's memo keyed
 * (dim, (shape, dtype, device) of each tensor) as the Python front keys it; a 1-d result, which NumPy's call
 * allocates C-contiguous. */
static PyObject *list_functional(Front *f, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 2 || !PyList_CheckExact(args[0])) return FALLBACK;
    PyObject *list = args[0];
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n < 1 || n > 8 || !PyTuple_Check(f->defaults) || PyTuple_GET_SIZE(f->defaults) != 1) return FALLBACK;
    PyObject *dim = nargs > 1 ? args[1] : PyTuple_GET_ITEM(f->defaults, 0);
    if (!PyLong_CheckExact(dim)) return FALLBACK;
    PyObject *first = PyList_GET_ITEM(list, 0);
    if (!is_tensor(first)) return FALLBACK;
    PyObject *device = SLOT(first, off_device);
    PyObject *items[9] = {dim}, *arrays = NULL, *result = NULL;
    Py_ssize_t made = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(list, i);
        if (!is_tensor(t) || SLOT(t, off_device) != device) goto fallback;
        items[1 + i] = PyTuple_Pack(3, SLOT(t, off_shape), SLOT(t, off_dtype), device);
        if (items[1 + i] == NULL) goto error;
        made++;
    }
    PyObject *spec = memo_spec(f, items, 1 + n);
    if (spec == NULL) {
        if (PyErr_Occurred()) goto error;
        goto fallback;
    }
    PyObject *rshape = PyTuple_GET_ITEM(spec, 0);
    if (!PyTuple_Check(rshape) || PyTuple_GET_SIZE(rshape) != 1 || !plain_device(f, device)) goto fallback;
    arrays = PyList_New(n);
    if (arrays == NULL) goto error;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = SLOT(PyList_GET_ITEM(list, i), off_array);
        Py_INCREF(a);
        PyList_SET_ITEM(arrays, i, a);
    }
    Py_INCREF(spec);
    PyObject *argv[2] = {arrays, dim};
    PyObject *array = PyObject_Vectorcall(direct_item(f, 1), argv, 2, NULL);
    result = memo_result(f, array, first, spec, device);
    Py_DECREF(spec);
    goto done;
fallback:
    result = FALLBACK;
    goto done;
error:
    result = NULL;
done:
    for (Py_ssize_t i = 0; i < made; i++) Py_DECREF(items[1 + i]);
    Py_XDECREF(arrays);
    return result;
}

/* UNARY_CALL: a unary op whose direct call is not a ufunc (relu): the result dtype from the meta's inline dict, a
 * 1-d or C-contiguous self (the allocating path's layout), the call allocates; wrapped as the allocating path
 * wraps it. */
static PyObject *unary_call_functional(Front *f, PyObject *self) {
    int fits;
    if (!is_tensor(self) || !PyDict_Check(f->entries)) return FALLBACK;
    PyObject *device = SLOT(self, off_device), *shape = SLOT(self, off_shape);
    PyObject *dtype = PyDict_GetItemWithError(f->entries, SLOT(self, off_dtype));
    if (dtype == NULL || dtype == Py_None) return PyErr_Occurred() ? NULL : FALLBACK;
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) == 0 || !plain_device(f, device)) return FALLBACK;
    if (PyTuple_GET_SIZE(shape) != 1 && (fits = c_contiguous(SLOT(self, off_array))) <= 0)
        return fits < 0 ? NULL : FALLBACK;
    PyObject *spec = PyTuple_Pack(2, shape, dtype);
    if (spec == NULL) return NULL;
    PyObject *argv[1] = {SLOT(self, off_array)};
    PyObject *array = PyObject_Vectorcall(direct_item(f, 1), argv, 1, NULL);
    PyObject *result = memo_result(f, array, self, spec, device);
    Py_DECREF(spec);
    return result;
}

/* The lanes of the MEMO kinds: positional arguments only, no out. */
static PyObject *memo_functional(Front *f, PyObject *const *args, Py_ssize_t nargs) {
    int fits;
    if (nargs < 1 || !is_tensor(args[0])) return FALLBACK;
    PyObject *self = args[0], *device = SLOT(self, off_device), *spec, *ufunc = direct_item(f, 1), *array;
    PyObject *shape = SLOT(self, off_shape), *dtype = SLOT(self, off_dtype);
    switch (f->arity) {
    case MEMO_REDUCE: {
        if (nargs > 3 || !PyTuple_Check(f->defaults) || PyTuple_GET_SIZE(f->defaults) != 3) return FALLBACK;
        if (nargs < 2 && PyTuple_GET_ITEM(f->defaults, 0) != Py_True) return FALLBACK;
        PyObject *dim = nargs > 1 ? args[1] : PyTuple_GET_ITEM(f->defaults, 1);
        PyObject *keepdim = nargs > 2 ? args[2] : PyTuple_GET_ITEM(f->defaults, 2);
        if (keepdim != Py_True && keepdim != Py_False) return FALLBACK;
        if (dim != Py_None && !PyLong_CheckExact(dim)) return FALLBACK;
        PyObject *key[4] = {shape, dtype, dim, keepdim};
        spec = memo_spec(f, key, 4);
        if (spec == NULL || PyTuple_GET_SIZE(spec) < 3) return PyErr_Occurred() ? NULL : FALLBACK;
        break;
    }
    case MEMO_INT: {
        if (nargs != 2 || !PyLong_CheckExact(args[1])) return FALLBACK;
        PyObject *key[3] = {shape, dtype, args[1]};
        spec = memo_spec(f, key, 3);
        if (spec == NULL || PyTuple_GET_SIZE(spec) < 3) return PyErr_Occurred() ? NULL : FALLBACK;
        break;
    }
    case MEMO_ARRAYS: {
        if (nargs != 2 || !is_tensor(args[1]) || SLOT(args[1], off_device) != device) return FALLBACK;
        PyObject *key[4] = {shape, dtype, SLOT(args[1], off_shape), SLOT(args[1], off_dtype)};
        spec = memo_spec(f, key, 4);
        if (spec == NULL) return PyErr_Occurred() ? NULL : FALLBACK;
        break;
    }
    case MEMO_SCALARS: {
        if (nargs != 3 || !is_tensor(args[1]) || !is_tensor(args[2])) return FALLBACK;
        if (SLOT(args[1], off_device) != device || SLOT(args[2], off_device) != device) return FALLBACK;
        PyObject *key[6] = {shape, dtype, SLOT(args[1], off_shape), SLOT(args[1], off_dtype), SLOT(args[2], off_shape),
                            SLOT(args[2], off_dtype)};
        spec = memo_spec(f, key, 6);
        if (spec == NULL) return PyErr_Occurred() ? NULL : FALLBACK;
        break;
    }
    default:
        return FALLBACK;
    }
    if (!plain_device(f, device)) return FALLBACK;
    Py_INCREF(spec); /* (the memo may drop it while the call runs) */
    PyObject *result = FALLBACK;
    PyObject *rdtype = PyTuple_GET_ITEM(spec, 1), *rshape = PyTuple_GET_ITEM(spec, 0);
    switch (f->arity) {
    case MEMO_REDUCE:
    case MEMO_INT: {
        if (!f->fresh) {
            if (rdtype != dtype) break;
            if ((fits = c_contiguous(SLOT(self, off_array))) <= 0) {
                if (fits < 0) result = NULL;
                break;
            }
        }
        PyObject *argv[2] = {SLOT(self, off_array), PyTuple_GET_ITEM(spec, 2)};
        array = PyObject_Vectorcall(ufunc, argv, 2, NULL);
        result = memo_result(f, array, self, spec, device);
        break;
    }
    case MEMO_ARRAYS: {
        Py_ssize_t ndim = PyTuple_Check(rshape) ? PyTuple_GET_SIZE(rshape) : -1;
        if (f->fresh) {
            if (!(0 < ndim && ndim <= f->fresh)) break;
        } else if (ndim != 1) {
            int a, b;
            if (ndim < 1) break;
            if ((a = c_contiguous(SLOT(self, off_array))) < 0 || (b = c_contiguous(SLOT(args[1], off_array))) < 0) {
                result = NULL;
                break;
            }
            if (!a || !b) break;
        }
        PyObject *argv[2] = {SLOT(self, off_array), SLOT(args[1], off_array)};
        array = PyObject_Vectorcall(ufunc, argv, 2, NULL);
        result = memo_result(f, array, self, spec, device);
        break;
    }
    case MEMO_SCALARS: {
        if (rdtype != dtype || rdtype != SLOT(args[1], off_dtype) || rdtype != SLOT(args[2], off_dtype)) break;
        Py_ssize_t n = PyTuple_Check(f->defaults) ? PyTuple_GET_SIZE(f->defaults) : 0;
        if (n > 5) break;
        PyObject *argv[8] = {SLOT(self, off_array), SLOT(args[1], off_array), SLOT(args[2], off_array)};
        for (Py_ssize_t i = 0; i < n; i++) argv[3 + i] = PyTuple_GET_ITEM(f->defaults, i);
        array = PyObject_Vectorcall(ufunc, argv, 3 + n, NULL);
        result = memo_result(f, array, self, spec, device);
        break;
    }
    }
    Py_DECREF(spec);
    return result;
}

/* Whether kwnames is exactly ("out",). */
static inline int only_out(PyObject *kwnames) {
    if (PyTuple_GET_SIZE(kwnames) != 1) return 0;
    PyObject *k = PyTuple_GET_ITEM(kwnames, 0);
    return k == str_out || PyUnicode_Compare(k, str_out) == 0;
}

/* The Python front, built on first need (borrowed). Under the GIL: a second thread asking while the builder runs
 * may build it too; the first one stored wins and the other is dropped (the fronts are pure functions of the op). */
static PyObject *python_front(Front *f) {
    if (f->python != NULL) return f->python;
    PyObject *fn = PyObject_CallNoArgs(f->builder);
    if (fn == NULL) return NULL;
    if (f->python == NULL) f->python = fn;
    else Py_DECREF(fn);
    return f->python;
}

static PyObject *front_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Front *f = (Front *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *r = FALLBACK;
    PyObject *flag = ready ? PyList_GET_ITEM(active_modes, 0) : NULL;
    /* (a mode on, in any thread: the Python front hands the call to the modes) */
    PyObject *ufunc = f->arity == FORWARD ? NULL : direct_item(f, 1);
    if (flag != NULL && (flag == zero || (PyLong_CheckExact(flag) && PyLong_AsLong(flag) == 0)) && ufunc != NULL &&
        ufunc != Py_None && direct_item(f, 0) != NULL) {
        PyObject *out = NULL;
        int plain = kwnames == NULL || PyTuple_GET_SIZE(kwnames) == 0;
        if (!plain && f->variant == FUNCTIONAL && only_out(kwnames)) {
            out = args[nargs];
            if (out == Py_None) out = NULL;
            else if (!is_tensor(out)) out = FALLBACK;
            plain = out != FALLBACK;
        }
        if (plain && f->arity == UNARY_CALL) {
            if (out == NULL && f->variant == FUNCTIONAL && nargs == 1) r = unary_call_functional(f, args[0]);
        } else if (plain && f->arity >= MEMO_REDUCE) {
            if (out == NULL && f->variant == FUNCTIONAL)
                r = f->arity == MEMO_LIST ? list_functional(f, args, nargs) : memo_functional(f, args, nargs);
        } else if (plain && f->arity != FORWARD) {
            if (f->arity == BINARY && nargs == 2) {
                if (f->variant == REFLECTED) {
                    if (out == NULL) r = binary_functional(f, args[1], args[0], NULL);
                } else {
                    r = f->variant == FUNCTIONAL ? binary_functional(f, args[0], args[1], out)
                                                 : binary_inplace(f, args[0], args[1]);
                }
            } else if (f->arity == UNARY && nargs == 1) {
                r = f->variant == FUNCTIONAL ? unary_functional(f, args[0], out) : unary_inplace(f, args[0]);
            }
        }
    }
    if (r != FALLBACK) return r;
    PyObject *python = python_front(f);
    if (python == NULL) return NULL;
    if (f->variant == REFLECTED) {
        /* the operator's operands, swapped (a reflected operator is called with exactly two) */
        if (nargs != 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
            PyErr_SetString(PyExc_TypeError, "a reflected operator takes exactly two operands");
            return NULL;
        }
        PyObject *swapped[2] = {args[1], args[0]};
        return PyObject_Vectorcall(python, swapped, 2, NULL);
    }
    return PyObject_Vectorcall(python, args, nargsf, kwnames);
}

static PyObject *front_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    return PyVectorcall_Call(self, args, kwargs);
}

/* Front(builder, name, arity, variant, entries, direct, handlers, specs=None, defaults=(), fresh=0): builder()
 * makes the Python front. */
static PyObject *front_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *builder, *name, *entries, *direct, *handlers, *specs = Py_None, *defaults = NULL;
    int arity, variant, fresh = 0;
    if (!PyArg_ParseTuple(args, "OUiiOOO!|OO!i:Front", &builder, &name, &arity, &variant, &entries, &direct,
                          &PyDict_Type, &handlers, &specs, &PyTuple_Type, &defaults, &fresh))
        return NULL;
    if (arity >= MEMO_REDUCE && arity <= MEMO_LIST && !PyDict_Check(specs)) {
        PyErr_SetString(PyExc_TypeError, "Front: a memo lane needs the meta's memo (a dict)");
        return NULL;
    }
    if (variant == REFLECTED && arity != BINARY) {
        PyErr_SetString(PyExc_ValueError, "Front: only a binary lane can be reflected");
        return NULL;
    }
    if (!PyCallable_Check(builder)) {
        PyErr_SetString(PyExc_TypeError, "Front: the builder of the Python front must be callable");
        return NULL;
    }
    if (arity < FORWARD || arity > UNARY_CALL || variant < FUNCTIONAL || variant > REFLECTED) {
        PyErr_SetString(PyExc_ValueError, "Front: unknown lane kind or variant");
        return NULL;
    }
    if (arity != FORWARD && !((PyTuple_Check(direct) && PyTuple_GET_SIZE(direct) >= 2) ||
                              (PyList_Check(direct) && PyList_GET_SIZE(direct) >= 2))) {
        PyErr_SetString(PyExc_TypeError, "Front: direct must be a list or tuple (kernel, ufunc, ...)");
        return NULL;
    }
    Front *f = (Front *)type->tp_alloc(type, 0);
    if (f == NULL) return NULL;
    f->vectorcall = front_vectorcall;
    f->dict = PyDict_New();
    if (f->dict == NULL) {
        Py_DECREF(f);
        return NULL;
    }
    Py_INCREF(builder);
    f->builder = builder;
    Py_INCREF(name);
    f->name = name;
    Py_INCREF(entries);
    f->entries = entries;
    Py_INCREF(direct);
    f->direct = direct;
    Py_INCREF(handlers);
    f->handlers = handlers;
    Py_INCREF(specs);
    f->specs = specs;
    f->defaults = defaults != NULL ? defaults : PyTuple_New(0);
    if (defaults != NULL) Py_INCREF(defaults);
    if (f->defaults == NULL) {
        Py_DECREF(f);
        return NULL;
    }
    f->arity = arity;
    f->variant = variant;
    f->fresh = fresh;
    return (PyObject *)f;
}

static int front_traverse(Front *f, visitproc visit, void *arg) {
    Py_VISIT(f->dict);
    Py_VISIT(f->python);
    Py_VISIT(f->builder);
    Py_VISIT(f->name);
    Py_VISIT(f->entries);
    Py_VISIT(f->direct);
    Py_VISIT(f->handlers);
    Py_VISIT(f->specs);
    Py_VISIT(f->defaults);
    Py_VISIT(f->last_key);
    Py_VISIT(f->last_spec);
    Py_VISIT(f->last_type);
    Py_VISIT(f->last_class);
    return 0;
}

static int front_clear(Front *f) {
    Py_CLEAR(f->dict);
    Py_CLEAR(f->python);
    Py_CLEAR(f->builder);
    Py_CLEAR(f->name);
    Py_CLEAR(f->entries);
    Py_CLEAR(f->direct);
    Py_CLEAR(f->handlers);
    Py_CLEAR(f->specs);
    Py_CLEAR(f->defaults);
    Py_CLEAR(f->last_key);
    Py_CLEAR(f->last_spec);
    Py_CLEAR(f->last_type);
    Py_CLEAR(f->last_class);
    return 0;
}

static void front_dealloc(Front *f) {
    PyObject_GC_UnTrack(f);
    if (f->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)f);
    front_clear(f);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

/* A front is a method of Tensor (t.add(x), t + x): bound as Python functions are. */
static PyObject *front_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *front_repr(Front *f) {
    return PyUnicode_FromFormat("<compiled front %U>", f->name);
}

static PyObject *front_get_python(Front *f, void *closure) {
    PyObject *python = python_front(f);
    Py_XINCREF(python);
    return python;
}

static PyObject *front_is_built(Front *f, void *closure) { return PyBool_FromLong(f->python != NULL); }

/* Pickled by reference, as functions are: the name of the module attribute it is (devtensor.add). */
static PyObject *front_reduce(PyObject *self, PyObject *unused) { return PyObject_GetAttrString(self, "__qualname__"); }

static PyMethodDef front_methods[] = {
    {"__reduce__", front_reduce, METH_NOARGS, "pickled by reference (the module attribute of its name)"},
    {NULL},
};

static PyGetSetDef front_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"__wrapped__", (getter)front_get_python, NULL, "the Python front this one forwards to (built if not yet)", NULL},
    {"python_built", (getter)front_is_built, NULL, "whether the Python front was built already", NULL},
    {NULL},
};

static PyTypeObject Front_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "devtensor._core.Front",
    .tp_basicsize = sizeof(Front),
    .tp_dealloc = (destructor)front_dealloc,
    .tp_vectorcall_offset = offsetof(Front, vectorcall),
    .tp_repr = (reprfunc)front_repr,
    .tp_call = front_call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A compiled front: the common case of one elementwise op variant in C, the rest in its Python front.",
    .tp_traverse = (traverseproc)front_traverse,
    .tp_clear = (inquiry)front_clear,
    .tp_weaklistoffset = offsetof(Front, weakrefs),
    .tp_getset = front_getset,
    .tp_methods = front_methods,
    .tp_descr_get = front_get,
    .tp_dictoffset = offsetof(Front, dict),
    .tp_new = front_new,
};

/* The offset of the __slots__ member `name` of cls. -1 with an error set. */
static Py_ssize_t slot_offset(PyTypeObject *cls, const char *name) {
    PyObject *d = PyDict_GetItemString(cls->tp_dict, name);
    if (d == NULL || !PyObject_TypeCheck(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "devtensor._core: %s.%s is not a slot", cls->tp_name, name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "devtensor._core: %s.%s is not an object slot", cls->tp_name, name);
        return -1;
    }
    return m->offset;
}

/* setup(Tensor, Storage, Device, ACTIVE, alloc_failed, check_writable, written_then_raised) */
static PyObject *core_setup(PyObject *module, PyObject *args) {
    PyObject *tensor, *storage, *device;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OOO:setup", &PyType_Type, &tensor, &PyType_Type, &storage, &PyType_Type,
                          &device, &PyList_Type, &active_modes, &alloc_failed, &check_writable, &written_then_raised))
        return NULL;
    if (PyList_GET_SIZE(active_modes) != 1) {
        PyErr_SetString(PyExc_ValueError, "setup: ACTIVE must be a one-item list");
        return NULL;
    }
    PyTypeObject *t = (PyTypeObject *)tensor, *s = (PyTypeObject *)storage, *d = (PyTypeObject *)device;
    if ((off_array = slot_offset(t, "_array")) < 0 || (off_device = slot_offset(t, "_device")) < 0 ||
        (off_storage = slot_offset(t, "_storage")) < 0 || (off_shape = slot_offset(t, "_shape")) < 0 ||
        (off_dtype = slot_offset(t, "_dtype")) < 0 || (off_checked = slot_offset(t, "_write_checked")) < 0 ||
        (off_root = slot_offset(s, "root")) < 0 || (off_version = slot_offset(s, "version")) < 0 ||
        (off_guard = slot_offset(d, "_guard")) < 0 || (off_key = slot_offset(d, "key")) < 0)
        return NULL;
    Py_INCREF(tensor);
    Py_INCREF(storage);
    Py_INCREF(active_modes);
    Py_INCREF(alloc_failed);
    Py_INCREF(check_writable);
    Py_INCREF(written_then_raised);
    Tensor_type = t;
    Storage_type = s;
    ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef core_methods[] = {
    {"setup", core_setup, METH_VARARGS, "Bind the Tensor, Storage and Device classes and the rules' helpers."},
    {NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "devtensor._core", "devtensor's compiled fronts (see devtensor/structured/core.py).", -1,
    core_methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    if (PyType_Ready(&Front_type) < 0) return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (m == NULL) return NULL;
    kw_order = Py_BuildValue("(s)", "order");
    kw_out = Py_BuildValue("(s)", "out");
    str_C = PyUnicode_InternFromString("C");
    str_out = PyUnicode_InternFromString("out");
    str_self = PyUnicode_InternFromString("self");
    zero = PyLong_FromLong(0);
    one = PyLong_FromLong(1);
    if (!kw_order || !kw_out || !str_C || !str_out || !str_self || !zero || !one) return NULL;
    Py_INCREF(&Front_type);
    if (PyModule_AddObject(m, "Front", (PyObject *)&Front_type) < 0) return NULL;
    if (PyModule_AddStringConstant(m, "FINGERPRINT", DEVTENSOR_CORE_FINGERPRINT) < 0) return NULL;
    return m;
}
