#define _GNU_SOURCE
#include "kiln_jxl.h"
#include <dlfcn.h>
#include <pthread.h>
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#if defined(__x86_64__)
#define KILN_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define KILN_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

static kiln_jxl_api api;
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define LOAD(name) if (!(*(void **)&api.name = dlsym(lib, #name))) return

static FILE *sink;
static int quiet;

static ssize_t discard(void *cookie, const char *buffer, size_t size) {
    (void)cookie; (void)buffer;
    return (ssize_t)size;
}

#ifdef KILN_GLOB_DAT
/* The PT_GNU_RELRO range of the object loaded at `base`, found by dl_iterate_phdr. */
struct relro { ElfW(Addr) base, start, end; };

static int find_relro(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct relro *r = data;
    if (info->dlpi_addr != r->base) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            r->start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            r->end = r->start + info->dlpi_phdr[i].p_memsz;
        }
    }
    return 1;
}

/* Points the library's GOT entry for `stderr` at &sink. 1 when done (or when it has none). */
static int silence(void *lib) {
    struct link_map *map = NULL;
    if (!lib || dlinfo(lib, RTLD_DI_LINKMAP, &map) != 0 || !map) return 0;
    ElfW(Addr) base = map->l_addr;
    const ElfW(Rela) *rela = NULL;
    size_t rela_size = 0;
    const ElfW(Sym) *symbols = NULL;
    const char *strings = NULL;
    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
        /* glibc has relocated these in place; an unrelocated one is below the base. */
        ElfW(Addr) p = d->d_un.d_ptr < base ? d->d_un.d_ptr + base : d->d_un.d_ptr;
        if (d->d_tag == DT_RELA) rela = (const ElfW(Rela) *)p;
        else if (d->d_tag == DT_RELASZ) rela_size = d->d_un.d_val;
        else if (d->d_tag == DT_SYMTAB) symbols = (const ElfW(Sym) *)p;
        else if (d->d_tag == DT_STRTAB) strings = (const char *)p;
    }
    if (!symbols || !strings) return 0;
    struct relro relro = {base, 0, 0};
    dl_iterate_phdr(find_relro, &relro);
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; rela && i < rela_size / sizeof *rela; i++) {
        if (ELF64_R_TYPE(rela[i].r_info) != KILN_GLOB_DAT) continue;
        if (strcmp(strings + symbols[ELF64_R_SYM(rela[i].r_info)].st_name, "stderr") != 0) continue;
        FILE ***slot = (FILE ***)(base + rela[i].r_offset);
        void *start = (void *)((uintptr_t)slot & ~(uintptr_t)(page - 1));
        int in_relro = (ElfW(Addr))slot >= relro.start && (ElfW(Addr))slot < relro.end;
        if (in_relro && mprotect(start, (size_t)page, PROT_READ | PROT_WRITE) != 0) return 0;
        *slot = &sink;
        if (in_relro) mprotect(start, (size_t)page, PROT_READ);
    }
    return 1;
}
#else
static int silence(void *lib) { (void)lib; return 0; }
#endif

static void load(void) {
    void *lib = dlopen("libjxl.so.0.7", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    LOAD(JxlDecoderCreate);
    LOAD(JxlDecoderDestroy);
    LOAD(JxlDecoderSubscribeEvents);
    LOAD(JxlDecoderSetKeepOrientation);
    LOAD(JxlDecoderSetDecompressBoxes);
    LOAD(JxlDecoderSetUnpremultiplyAlpha);
    LOAD(JxlDecoderSetInput);
    LOAD(JxlDecoderCloseInput);
    LOAD(JxlDecoderProcessInput);
    LOAD(JxlDecoderGetBasicInfo);
    LOAD(JxlDecoderGetColorAsEncodedProfile);
    LOAD(JxlDecoderGetICCProfileSize);
    LOAD(JxlDecoderGetColorAsICCProfile);
    LOAD(JxlDecoderImageOutBufferSize);
    LOAD(JxlDecoderSetImageOutBuffer);
    cookie_io_functions_t io = {.read = NULL, .write = discard, .seek = NULL, .close = NULL};
    sink = fopencookie(NULL, "w", io);
    quiet = sink && silence(lib) && silence(dlopen("libhwy.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD));
    loaded = 1;
}

int kiln_jxl_is_quiet(void) {
    pthread_once(&once, load);
    return quiet;
}

const kiln_jxl_api *kiln_jxl_library(void) {
    pthread_once(&once, load);
    return loaded ? &api : NULL;
}

