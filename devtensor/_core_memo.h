/* devtensor._core's memo lanes (included once by _core.c, after _core_common.h): a functional call whose meta
 * result the op's memo holds and whose direct call allocates the result (reductions, softmax, matmul, addmm,
 * cat; relu's call). */
#ifndef DEVTENSOR_CORE_MEMO_H
#define DEVTENSOR_CORE_MEMO_H

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
    PyObject *flags = PyObject_GetAttr(array, str_flags);
    if (flags == NULL) return -1;
    PyObject *c = PyObject_GetAttr(flags, str_c_contiguous);
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
    if (array == NULL) return allocation_error(f, spec, device);
    PyObject *cls = result_class(f, first);
    PyObject *dtype = cls ? PyObject_GetAttr(array, str_dtype) : NULL;
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
    if (!is_tensor_of(f, first)) return FALLBACK;
    PyObject *device = SLOT(first, off_device);
    PyObject *items[9] = {dim}, *arrays = NULL, *result = NULL, *spec = NULL;
    Py_ssize_t made = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(list, i);
        if (!is_tensor_of(f, t) || SLOT(t, off_device) != device) goto fallback;
    }
    /* (the key looked up last, compared field by field first: in a loop of one call it spares packing and
     * comparing a (shape, dtype, device) tuple per tensor) */
    PyObject *last = f->last_key;
    if (last != NULL && PyTuple_GET_SIZE(last) == 1 + n && PyTuple_GET_ITEM(last, 0) == dim) {
        Py_ssize_t i = 0;
        for (; i < n; i++) {
            PyObject *t = PyList_GET_ITEM(list, i), *k = PyTuple_GET_ITEM(last, 1 + i);
            if (!PyTuple_CheckExact(k) || PyTuple_GET_SIZE(k) != 3 || PyTuple_GET_ITEM(k, 1) != SLOT(t, off_dtype) ||
                PyTuple_GET_ITEM(k, 2) != device)
                break;
            PyObject *a = PyTuple_GET_ITEM(k, 0), *b = SLOT(t, off_shape);
            if (a != b) {
                int eq = PyTuple_CheckExact(a) && PyTuple_CheckExact(b) ? PyObject_RichCompareBool(a, b, Py_EQ) : 0;
                if (eq < 0) goto error;
                if (!eq) break;
            }
        }
        if (i == n) spec = f->last_spec;
    }
    if (spec == NULL) {
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *t = PyList_GET_ITEM(list, i);
            items[1 + i] = PyTuple_Pack(3, SLOT(t, off_shape), SLOT(t, off_dtype), device);
            if (items[1 + i] == NULL) goto error;
            made++;
        }
        spec = memo_spec(f, items, 1 + n);
    }
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
    if (!is_tensor_of(f, self) || !PyDict_Check(f->entries)) return FALLBACK;
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
/* out= of a memo lane: exactly the spec's shape and dtype, on the device, checked writable, sharing no root with an
 * input; the direct call writes it (as the Python front's out path makes it). */
static PyObject *memo_out(Front *f, PyObject *const *args, Py_ssize_t ntensors, PyObject *spec, PyObject *out) {
    int fits;
    PyObject *device = SLOT(args[0], off_device), *root = SLOT(SLOT(out, off_storage), off_root);
    if (SLOT(out, off_device) != device || SLOT(out, off_dtype) != PyTuple_GET_ITEM(spec, 1)) return FALLBACK;
    if ((fits = same_shape(SLOT(out, off_shape), PyTuple_GET_ITEM(spec, 0))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if ((fits = PyObject_IsTrue(SLOT(out, off_checked))) <= 0) return fits < 0 ? NULL : FALLBACK;
    for (Py_ssize_t i = 0; i < ntensors; i++)
        if (SLOT(SLOT(args[i], off_storage), off_root) == root) return FALLBACK;
    PyObject *fn = direct_item(f, 1), *target = SLOT(out, off_array), *r;
    if (f->arity == MEMO_ARRAYS) {
        PyObject *argv[3] = {SLOT(args[0], off_array), SLOT(args[1], off_array), target};
        r = PyObject_Vectorcall(fn, argv, 2, kw_out);
    } else if (f->arity == MEMO_SCALARS) {
        Py_ssize_t n = PyTuple_GET_SIZE(f->defaults);
        if (n > 4) return FALLBACK;
        PyObject *argv[8] = {SLOT(args[0], off_array), SLOT(args[1], off_array), SLOT(args[2], off_array)};
        for (Py_ssize_t i = 0; i < n; i++) argv[3 + i] = PyTuple_GET_ITEM(f->defaults, i);
        argv[3 + n] = target;
        r = PyObject_Vectorcall(fn, argv, 4 + n, NULL);
    } else {
        if (PyTuple_GET_SIZE(spec) < 3) return FALLBACK;
        PyObject *argv[3] = {SLOT(args[0], off_array), PyTuple_GET_ITEM(spec, 2), target};
        r = PyObject_Vectorcall(fn, argv, 3, NULL);
    }
    if (r == NULL) return write_error(f, str_out, out);
    Py_DECREF(r);
    if (bump(out) < 0) return NULL;
    Py_INCREF(out);
    return out;
}

static PyObject *memo_functional(Front *f, PyObject *const *args, Py_ssize_t nargs, PyObject *out) {
    int fits;
    if (nargs < 1 || !is_tensor_of(f, args[0])) return FALLBACK;
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
        if (nargs != 2 || !is_tensor_of(f, args[1]) || SLOT(args[1], off_device) != device) return FALLBACK;
        PyObject *key[4] = {shape, dtype, SLOT(args[1], off_shape), SLOT(args[1], off_dtype)};
        spec = memo_spec(f, key, 4);
        if (spec == NULL) return PyErr_Occurred() ? NULL : FALLBACK;
        break;
    }
    case MEMO_SCALARS: {
        if (nargs != 3 || !is_tensor_of(f, args[1]) || !is_tensor_of(f, args[2])) return FALLBACK;
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
    if (out != NULL) {
        Py_ssize_t ntensors = f->arity == MEMO_ARRAYS ? 2 : f->arity == MEMO_SCALARS ? 3 : 1;
        result = memo_out(f, args, ntensors, spec, out);
        Py_DECREF(spec);
        return result;
    }
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

#endif
