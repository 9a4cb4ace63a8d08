/* devtensor._core's elementwise lanes (included once by _core.c, after _core_common.h): a binary or unary ufunc
 * op's functional call, out= and inplace variants, as the Python fronts' own lanes take them. */
#ifndef DEVTENSOR_CORE_ELEMENTWISE_H
#define DEVTENSOR_CORE_ELEMENTWISE_H

/* ---- the lanes: each returns a new reference, NULL with an error set, or FALLBACK ---- */

/* The inline entry for a tensor `self` and `other` (a tensor of self's device and shape, whose dtype the entry used
 * last, or the one before, holds: x * y beside x * mask; or a Python number the scalar entry takes), with `other`'s
 * operand (its array, or the number) in *value. 1: found (borrowed into *entry); 0: no lane; -1: an error. A tensor
 * `other` sharing memory with `target` (an out, or an inplace self) has no lane, unless it is `exempt` itself (an
 * inplace self passed again: the elementwise ops write over their input). */
static int tensor_entry(Front *f, PyObject *self, PyObject *other, PyObject *target, PyObject *exempt,
                        PyObject **entry, PyObject **value) {
    PyObject *entries = f->entries;
    int fits;
    if (is_tensor_of(f, other)) {
        if ((*entry = entry_at(entries, 0, 3)) == NULL) return 0;
        if (SLOT(other, off_dtype) != PyTuple_GET_ITEM(*entry, 1) && (*entry = entry_at(entries, 3, 3)) == NULL)
            return 0;
        if (SLOT(other, off_device) != SLOT(self, off_device) || SLOT(other, off_dtype) != PyTuple_GET_ITEM(*entry, 1))
            return 0;
        if ((fits = same_shape(SLOT(self, off_shape), SLOT(other, off_shape))) <= 0) return fits;
        if (target != NULL && other != exempt &&
            SLOT(SLOT(other, off_storage), off_root) == SLOT(SLOT(target, off_storage), off_root))
            return 0;
        *value = SLOT(other, off_array);
    } else {
        if ((*entry = entry_at(entries, 1, 7)) == NULL) return 0;
        if ((fits = scalar_fits(*entry, 1, other)) <= 0) return fits;
        *value = other;
    }
    return SLOT(self, off_dtype) == PyTuple_GET_ITEM(*entry, 0);
}

static PyObject *binary_functional(Front *f, PyObject *self, PyObject *other, PyObject *out, PyObject *alpha) {
    PyObject *entries = f->entries, *entry, *device, *argv[2];
    int fits;
    if (is_tensor_of(f, self)) {
        device = SLOT(self, off_device);
        if ((fits = tensor_entry(f, self, other, out, NULL, &entry, &argv[1])) <= 0)
            return fits < 0 ? NULL : FALLBACK;
        argv[0] = SLOT(self, off_array);
    } else if (is_tensor_of(f, other) && out == NULL) {
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
        PyObject *tensor = is_tensor_of(f, self) ? self : other;
        PyObject *shape = SLOT(tensor, off_shape);
        PyObject *array = call_allocating(ufunc, argv, 2, shape);
        if (array == NULL) return allocation_error_of(f, shape, dtype, device);
        return wrap(Py_TYPE(tensor), array, device, shape, dtype);
    }
    /* out=: exactly the result's device, shape and dtype, checked writable, sharing no root with an input */
    if (SLOT(out, off_dtype) != dtype || SLOT(out, off_device) != device) return FALLBACK;
    if (alpha != NULL && (fits = alpha_fits(alpha, dtype)) <= 0) return fits < 0 ? NULL : FALLBACK;
    if ((fits = same_shape(SLOT(out, off_shape), SLOT(self, off_shape))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if ((fits = PyObject_IsTrue(SLOT(out, off_checked))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if (SLOT(SLOT(self, off_storage), off_root) == SLOT(SLOT(out, off_storage), off_root)) return FALLBACK;
    if (!plain_device(f, device)) return FALLBACK;
    PyObject *r = write_call(ufunc, direct_item(f, 2), argv[0], argv[1], alpha, SLOT(out, off_array));
    if (r == NULL) return write_error(f, str_out, out);
    Py_DECREF(r);
    if (bump(out) < 0) return NULL;
    Py_INCREF(out);
    return out;
}

static PyObject *binary_inplace(Front *f, PyObject *self, PyObject *other, PyObject *alpha) {
    PyObject *entry, *value;
    int fits;
    if (!is_tensor_of(f, self)) return FALLBACK;
    PyObject *device = SLOT(self, off_device);
    if ((fits = tensor_entry(f, self, other, self, self, &entry, &value)) <= 0) return fits < 0 ? NULL : FALLBACK;
    PyObject *dtype = SLOT(self, off_dtype);
    if (dtype != PyTuple_GET_ITEM(entry, 2)) return FALLBACK;
    if ((fits = PyObject_IsTrue(SLOT(self, off_checked))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if (alpha != NULL && (fits = alpha_fits(alpha, dtype)) <= 0) return fits < 0 ? NULL : FALLBACK;
    if (!plain_device(f, device)) return FALLBACK;
    PyObject *array = SLOT(self, off_array);
    PyObject *r = write_call(direct_item(f, 1), direct_item(f, 2), array, value, alpha, array);
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
    if (!is_tensor_of(f, self)) return FALLBACK;
    PyObject *device = SLOT(self, off_device);
    PyObject *dtype = unary_dtype(f, SLOT(self, off_dtype));
    if (dtype == NULL) return FALLBACK;
    PyObject *ufunc = direct_item(f, 1);
    PyObject *argv[1] = {SLOT(self, off_array)};
    if (out == NULL) {
        if (!plain_device(f, device)) return FALLBACK;
        PyObject *shape = SLOT(self, off_shape);
        PyObject *array = call_allocating(ufunc, argv, 1, shape);
        if (array == NULL) return allocation_error_of(f, shape, dtype, device);
        return wrap(Py_TYPE(self), array, device, shape, dtype);
    }
    if (SLOT(out, off_dtype) != dtype || SLOT(out, off_device) != device) return FALLBACK;
    if ((fits = same_shape(SLOT(out, off_shape), SLOT(self, off_shape))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if ((fits = PyObject_IsTrue(SLOT(out, off_checked))) <= 0) return fits < 0 ? NULL : FALLBACK;
    if (SLOT(SLOT(self, off_storage), off_root) == SLOT(SLOT(out, off_storage), off_root)) return FALLBACK;
    if (!plain_device(f, device)) return FALLBACK;
    PyObject *args[2] = {argv[0], SLOT(out, off_array)};
    PyObject *r = PyObject_Vectorcall(ufunc, args, 2, NULL); /* (out positionally: see write_call) */
    if (r == NULL) return write_error(f, str_out, out);
    Py_DECREF(r);
    if (bump(out) < 0) return NULL;
    Py_INCREF(out);
    return out;
}

static PyObject *unary_inplace(Front *f, PyObject *self) {
    int fits;
    if (!is_tensor_of(f, self)) return FALLBACK;
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

#endif
