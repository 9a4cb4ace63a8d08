/* softmax's and log_softmax's direct path (meta.DIRECT's array kernel) in C: the common case of
 * devtensor/kernels/nn.py's _softmax_cpu (input and any out array of the compute dtype, an element, a dim),
 * the same NumPy calls on the same arrays in the same order under the same floating-point state, so the same
 * values; what it leaves from the Python body is its frame, its tests and the state switch's bytecode (about 1 µs
 * of the 7 µs a 10x10 softmax costs). Every other call is _softmax_cpu's own (called with the same arguments). A
 * step that raised a floating-point condition as an error gets the body's recovery, _softmax_recover (the steps
 * again, silenced, into the out array), and then that first error: not the whole body again, which would run the
 * steps a second time in the caller's state (a seterrcall callback called twice, and an out array that is also
 * the input read after the first pass wrote it).
 * Made by softmax_direct(...) below from the Python objects it calls (structured/core.py install_softmax_direct). */

enum { SM_EXTOBJ, SM_QUIET, SM_QUIET_EXTOBJ, SM_MAX, SM_SUM, SM_SUBTRACT, SM_EXP, SM_LOG, SM_DIVIDE, SM_RECOVER, SM_PYTHON,
       SM_N };

static PyObject *str_axis, *str_log, *str_compute, *str_size;

/* The steps in the quiet state: max, subtract (into out, or a new result), then exp/sum/divide (softmax) or
 * exp/sum/log/subtract (log_softmax). Returns the result, or NULL with the error set. */
static PyObject *softmax_steps(PyObject *const *fn, PyObject *x, PyObject *out, PyObject *axis, int log) {
    PyObject *reduce_args[5] = {x, axis, Py_None, Py_None, Py_True}; /* (keepdims positionally, as the body) */
    PyObject *m = PyObject_Vectorcall(fn[SM_MAX], reduce_args, 5, NULL), *s = NULL, *r;
    if (m == NULL) return NULL;
    PyObject *sub_args[3] = {x, m, out};
    PyObject *o = PyObject_Vectorcall(fn[SM_SUBTRACT], sub_args, out ? 3 : 2, NULL);
    Py_DECREF(m);
    if (o == NULL) return NULL;
    PyObject *oo[3] = {o, o, NULL};
    if (log) {
        PyObject *e = PyObject_Vectorcall(fn[SM_EXP], oo, 1, NULL);
        if (e == NULL) goto fail;
        reduce_args[0] = e;
        s = PyObject_Vectorcall(fn[SM_SUM], reduce_args, 5, NULL);
        Py_DECREF(e);
        if (s == NULL) goto fail;
        PyObject *ss[2] = {s, s};
        if ((r = PyObject_Vectorcall(fn[SM_LOG], ss, 2, NULL)) == NULL) goto fail;
        Py_DECREF(r);
        PyObject *last[3] = {o, s, o};
        r = PyObject_Vectorcall(fn[SM_SUBTRACT], last, 3, NULL);
    } else {
        if ((r = PyObject_Vectorcall(fn[SM_EXP], oo, 2, NULL)) == NULL) goto fail;
        Py_DECREF(r);
        reduce_args[0] = o;
        if ((s = PyObject_Vectorcall(fn[SM_SUM], reduce_args, 5, NULL)) == NULL) goto fail;
        PyObject *last[3] = {o, s, o};
        r = PyObject_Vectorcall(fn[SM_DIVIDE], last, 3, NULL);
    }
    if (r == NULL) goto fail;
    Py_DECREF(r);
    Py_DECREF(s);
    return o;
fail:
    Py_XDECREF(s);
    Py_DECREF(o);
    return NULL;
}

/* 1 when the call is the common case (x and out, if any, of the plan's compute dtype, a dim, an element), 0 when
 * not, -1 on error; *axis and *log are set for the common case (axis a new reference). */
static int softmax_common(PyObject *x, PyObject *plan, PyObject *out, PyObject **axis, int *log) {
    PyObject *dtype = PyObject_GetAttr(x, str_dtype), *compute = NULL, *size = NULL, *flag = NULL, *odtype = NULL;
    int common = -1;
    *axis = NULL;
    if (dtype == NULL || (compute = PyObject_GetAttr(plan, str_compute)) == NULL) goto done;
    if (out != NULL && (odtype = PyObject_GetAttr(out, str_dtype)) == NULL) goto done;
    if (dtype != compute || (out != NULL && odtype != compute)) {
        common = 0;
        goto done;
    }
    if ((*axis = PyObject_GetAttr(plan, str_axis)) == NULL || (size = PyObject_GetAttr(x, str_size)) == NULL ||
        (flag = PyObject_GetAttr(plan, str_log)) == NULL)
        goto done;
    int nonempty = PyObject_IsTrue(size);
    if (nonempty < 0 || (*log = PyObject_IsTrue(flag)) < 0) goto done;
    common = *axis != Py_None && nonempty;
done:
    Py_XDECREF(dtype);
    Py_XDECREF(compute);
    Py_XDECREF(size);
    Py_XDECREF(flag);
    Py_XDECREF(odtype);
    if (common != 1) Py_CLEAR(*axis);
    return common;
}

/* direct(x, plan) -> a new result; direct(x, plan, o) -> o; keywords, None for o: _softmax_cpu's. */
static PyObject *softmax_direct_call(PyObject *bound, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    PyObject *const *fn = &PyTuple_GET_ITEM(bound, 0), *axis, *caller, *token;
    int log = 0;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 2 || nargs > 3 || kwnames != NULL || (nargs == 3 && args[2] == Py_None)) goto python;
    PyObject *out = nargs == 3 ? args[2] : NULL;
    int common = softmax_common(args[0], args[1], out, &axis, &log);
    if (common <= 0) {
        if (common < 0) return NULL;
        goto python;
    }
    if (PyContextVar_Get(fn[SM_EXTOBJ], NULL, &caller) < 0) goto fail_axis;
    /* QUIET.get(caller) or quiet_extobj(): the caller's state with divide, invalid and over ignored */
    PyObject *quiet = caller ? PyDict_GetItemWithError(fn[SM_QUIET], caller) : NULL;
    Py_XDECREF(caller);
    if (quiet != NULL)
        Py_INCREF(quiet);
    else if (PyErr_Occurred() || (quiet = PyObject_CallNoArgs(fn[SM_QUIET_EXTOBJ])) == NULL)
        goto fail_axis;
    token = PyContextVar_Set(fn[SM_EXTOBJ], quiet);
    Py_DECREF(quiet);
    if (token == NULL) goto fail_axis;
    PyObject *o = softmax_steps(fn, args[0], out, axis, log);
    Py_DECREF(axis);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb); /* (the state is reset whether or not a step raised) */
    int reset = PyContextVar_Reset(fn[SM_EXTOBJ], token);
    Py_DECREF(token);
    if (reset < 0) {
        Py_XDECREF(o);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return NULL;
    }
    PyErr_Restore(type, value, tb);
    if (o != NULL) return o;
    if (!PyErr_ExceptionMatches(PyExc_Warning) && !PyErr_ExceptionMatches(PyExc_FloatingPointError)) return NULL;
    /* a condition the caller made an error: the Python body's recovery (into out), then this error */
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL) PyException_SetTraceback(value, tb);
    PyObject *recover_args[3] = {args[0], args[1], out ? out : Py_None};
    PyObject *r = PyObject_Vectorcall(fn[SM_RECOVER], recover_args, 3, NULL);
    if (r == NULL) { /* (the recovery's own error, the first as its context, as in the body's except clause) */
        PyObject *t2, *v2, *tb2;
        PyErr_Fetch(&t2, &v2, &tb2);
        PyErr_NormalizeException(&t2, &v2, &tb2);
        if (tb2 != NULL) PyException_SetTraceback(v2, tb2);
        PyException_SetContext(v2, value); /* (steals value) */
        Py_DECREF(type);
        Py_XDECREF(tb);
        PyErr_Restore(t2, v2, tb2);
        return NULL;
    }
    Py_DECREF(r);
    PyErr_Restore(type, value, tb);
    return NULL;
python:
    return PyObject_Vectorcall(fn[SM_PYTHON], args, nargsf, kwnames);
fail_axis:
    Py_DECREF(axis);
    return NULL;
}

static PyMethodDef softmax_direct_def = {"softmax_direct", (PyCFunction)(void (*)(void))softmax_direct_call,
                                         METH_FASTCALL | METH_KEYWORDS,
                                         "softmax's and log_softmax's direct path (devtensor/_core_softmax.h)."};

/* softmax_direct(EXTOBJ, QUIET, quiet_extobj, reduce_max, reduce_sum, subtract, exp, log, divide, recover, python) */
static PyObject *core_softmax_direct(PyObject *module, PyObject *args) {
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != SM_N || !PyDict_Check(PyTuple_GET_ITEM(args, SM_QUIET)) ||
        !PyContextVar_CheckExact(PyTuple_GET_ITEM(args, SM_EXTOBJ))) {
        PyErr_SetString(PyExc_TypeError, "softmax_direct: expected (EXTOBJ, QUIET, quiet_extobj, reduce_max, "
                                         "reduce_sum, subtract, exp, log, divide, recover, python)");
        return NULL;
    }
    if (str_axis == NULL) {
        str_axis = PyUnicode_InternFromString("axis");
        str_log = PyUnicode_InternFromString("log");
        str_compute = PyUnicode_InternFromString("compute");
        str_size = PyUnicode_InternFromString("size");
        if (!str_axis || !str_log || !str_compute || !str_size) return NULL;
    }
    return PyCFunction_NewEx(&softmax_direct_def, args, module);
}
