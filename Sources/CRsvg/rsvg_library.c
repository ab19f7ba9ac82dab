#define _GNU_SOURCE
#include "kiln_rsvg.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* librsvg's, GLib's and cairo's C ABI, as their headers declare it (librsvg 2.54, cairo 1.16). */
typedef struct { uint32_t domain; int code; char *message; } kiln_gerror;
typedef struct { double x, y, width, height; } kiln_rsvg_rectangle;
enum { KILN_CAIRO_FORMAT_ARGB32 = 0, KILN_CAIRO_STATUS_SUCCESS = 0 };

static struct {
    void *(*rsvg_handle_new_from_data)(const uint8_t *, size_t, kiln_gerror **);
    void (*rsvg_handle_set_dpi)(void *, double);
    int (*rsvg_handle_render_document)(void *, void *, const kiln_rsvg_rectangle *, kiln_gerror **);
    void (*g_object_unref)(void *);
    void (*g_error_free)(kiln_gerror *);
    void *(*cairo_image_surface_create_for_data)(unsigned char *, int, int, int, int);
    int (*cairo_surface_status)(void *);
    void (*cairo_surface_flush)(void *);
    void (*cairo_surface_destroy)(void *);
    void *(*cairo_create)(void *);
    void (*cairo_scale)(void *, double, double);
    int (*cairo_status)(void *);
    void (*cairo_destroy)(void *);
} api;
static unsigned *major, *minor, *micro;
static char version[32];
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LOAD(lib, name) if (!(*(void **)&api.name = dlsym(lib, #name))) return

static void load(void) {
    void *rsvg = dlopen("librsvg-2.so.2", RTLD_NOW | RTLD_LOCAL);
    void *gobject = dlopen("libgobject-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    void *glib = dlopen("libglib-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    void *cairo = dlopen("libcairo.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!rsvg || !gobject || !glib || !cairo) return;
    LOAD(rsvg, rsvg_handle_new_from_data);
    LOAD(rsvg, rsvg_handle_set_dpi);
    LOAD(rsvg, rsvg_handle_render_document);
    LOAD(gobject, g_object_unref);
    LOAD(glib, g_error_free);
    LOAD(cairo, cairo_image_surface_create_for_data);
    LOAD(cairo, cairo_surface_status);
    LOAD(cairo, cairo_surface_flush);
    LOAD(cairo, cairo_surface_destroy);
    LOAD(cairo, cairo_create);
    LOAD(cairo, cairo_scale);
    LOAD(cairo, cairo_status);
    LOAD(cairo, cairo_destroy);
    major = dlsym(rsvg, "rsvg_major_version");
    minor = dlsym(rsvg, "rsvg_minor_version");
    micro = dlsym(rsvg, "rsvg_micro_version");
    if (major && minor && micro) snprintf(version, sizeof version, "%u.%u.%u", *major, *minor, *micro);
    loaded = 1;
}

int kiln_rsvg_available(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *kiln_rsvg_version(void) {
    return kiln_rsvg_available() ? version : "";
}

static int fail(char *error, size_t length, const char *what, kiln_gerror *gerror) {
    snprintf(error, length, "%s%s%s", what, gerror && gerror->message ? ": " : "",
             gerror && gerror->message ? gerror->message : "");
    /* One line: librsvg's messages may span several. */
    for (char *p = error; *p; p++) if (*p == '\n' || *p == '\r') *p = ' ';
    if (gerror) api.g_error_free(gerror);
    return -1;
}

int kiln_rsvg_render(const uint8_t *data, size_t length, double intrinsic_width, double intrinsic_height,
                     int width, int height, uint8_t *pixels, char *error, size_t error_length) {
    if (!kiln_rsvg_available()) return fail(error, error_length, "librsvg is not installed", NULL);
    if (width <= 0 || height <= 0 || width > 32767 || height > 32767 || intrinsic_width <= 0 || intrinsic_height <= 0)
        return fail(error, error_length, "bad raster size", NULL);
    kiln_gerror *gerror = NULL;
    void *handle = api.rsvg_handle_new_from_data(data, length, &gerror);
    if (!handle) return fail(error, error_length, "librsvg could not parse the document", gerror);
    api.rsvg_handle_set_dpi(handle, 96);
    void *surface = api.cairo_image_surface_create_for_data(pixels, KILN_CAIRO_FORMAT_ARGB32, width, height, width * 4);
    if (api.cairo_surface_status(surface) != KILN_CAIRO_STATUS_SUCCESS) {
        api.cairo_surface_destroy(surface);
        api.g_object_unref(handle);
        return fail(error, error_length, "cairo could not make the surface", NULL);
    }
    void *cr = api.cairo_create(surface);
    api.cairo_scale(cr, (double)width / intrinsic_width, (double)height / intrinsic_height);
    kiln_rsvg_rectangle viewport = { 0, 0, intrinsic_width, intrinsic_height };
    int ok = api.rsvg_handle_render_document(handle, cr, &viewport, &gerror);
    int status = api.cairo_status(cr);
    api.cairo_destroy(cr);
    api.cairo_surface_flush(surface);
    api.cairo_surface_destroy(surface);
    api.g_object_unref(handle);
    if (!ok) return fail(error, error_length, "librsvg could not draw the document", gerror);
    if (gerror) api.g_error_free(gerror);
    if (status != KILN_CAIRO_STATUS_SUCCESS) return fail(error, error_length, "cairo failed while drawing", NULL);
    return 0;
}
