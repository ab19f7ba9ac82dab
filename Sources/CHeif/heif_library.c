#define _GNU_SOURCE
#include "kiln_heif.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static kiln_heif_api api;
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *lib = dlopen("libheif.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    if (!(*(void **)&api.heif_context_alloc = dlsym(lib, "heif_context_alloc"))) return;
    if (!(*(void **)&api.heif_context_free = dlsym(lib, "heif_context_free"))) return;
    if (!(*(void **)&api.heif_context_get_primary_image_handle = dlsym(lib, "heif_context_get_primary_image_handle"))) return;
    if (!(*(void **)&api.heif_context_read_from_memory_without_copy = dlsym(lib, "heif_context_read_from_memory_without_copy"))) return;
    if (!(*(void **)&api.heif_context_set_max_decoding_threads = dlsym(lib, "heif_context_set_max_decoding_threads"))) return;
    if (!(*(void **)&api.heif_decode_image = dlsym(lib, "heif_decode_image"))) return;
    if (!(*(void **)&api.heif_decoding_options_alloc = dlsym(lib, "heif_decoding_options_alloc"))) return;
    if (!(*(void **)&api.heif_decoding_options_free = dlsym(lib, "heif_decoding_options_free"))) return;
    if (!(*(void **)&api.heif_image_get_bits_per_pixel_range = dlsym(lib, "heif_image_get_bits_per_pixel_range"))) return;
    if (!(*(void **)&api.heif_image_get_height = dlsym(lib, "heif_image_get_height"))) return;
    if (!(*(void **)&api.heif_image_get_plane_readonly = dlsym(lib, "heif_image_get_plane_readonly"))) return;
    if (!(*(void **)&api.heif_image_get_width = dlsym(lib, "heif_image_get_width"))) return;
    if (!(*(void **)&api.heif_image_handle_get_color_profile_type = dlsym(lib, "heif_image_handle_get_color_profile_type"))) return;
    if (!(*(void **)&api.heif_image_handle_get_height = dlsym(lib, "heif_image_handle_get_height"))) return;
    if (!(*(void **)&api.heif_image_handle_get_ispe_height = dlsym(lib, "heif_image_handle_get_ispe_height"))) return;
    if (!(*(void **)&api.heif_image_handle_get_ispe_width = dlsym(lib, "heif_image_handle_get_ispe_width"))) return;
    if (!(*(void **)&api.heif_image_handle_get_metadata = dlsym(lib, "heif_image_handle_get_metadata"))) return;
    if (!(*(void **)&api.heif_image_handle_get_metadata_content_type = dlsym(lib, "heif_image_handle_get_metadata_content_type"))) return;
    if (!(*(void **)&api.heif_image_handle_get_metadata_size = dlsym(lib, "heif_image_handle_get_metadata_size"))) return;
    if (!(*(void **)&api.heif_image_handle_get_metadata_type = dlsym(lib, "heif_image_handle_get_metadata_type"))) return;
    if (!(*(void **)&api.heif_image_handle_get_nclx_color_profile = dlsym(lib, "heif_image_handle_get_nclx_color_profile"))) return;
    if (!(*(void **)&api.heif_image_handle_get_number_of_metadata_blocks = dlsym(lib, "heif_image_handle_get_number_of_metadata_blocks"))) return;
    if (!(*(void **)&api.heif_image_handle_get_raw_color_profile = dlsym(lib, "heif_image_handle_get_raw_color_profile"))) return;
    if (!(*(void **)&api.heif_image_handle_get_raw_color_profile_size = dlsym(lib, "heif_image_handle_get_raw_color_profile_size"))) return;
    if (!(*(void **)&api.heif_image_handle_get_width = dlsym(lib, "heif_image_handle_get_width"))) return;
    if (!(*(void **)&api.heif_image_handle_has_alpha_channel = dlsym(lib, "heif_image_handle_has_alpha_channel"))) return;
    if (!(*(void **)&api.heif_image_handle_release = dlsym(lib, "heif_image_handle_release"))) return;
    if (!(*(void **)&api.heif_image_release = dlsym(lib, "heif_image_release"))) return;
    if (!(*(void **)&api.heif_nclx_color_profile_free = dlsym(lib, "heif_nclx_color_profile_free"))) return;
    if (!(*(void **)&api.heif_image_handle_get_list_of_metadata_block_IDs = dlsym(lib, "heif_image_handle_get_list_of_metadata_block_IDs"))) return;
    loaded = 1;
}

const kiln_heif_api *kiln_heif_library(void) {
    pthread_once(&once, load);
    return loaded ? &api : NULL;
}
