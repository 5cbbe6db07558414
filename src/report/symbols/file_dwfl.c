/* SPDX-License-Identifier: MIT */
/* file_dwfl.c: a libdwfl session for one mapped file (see file_dwfl.h). */
#include "file_dwfl.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include "cu_index.h"
#include "frame.h"

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* What we keep per reported module (its libdwfl user data). */
struct module_data {
	bool indexed;               /* cus was built */
	struct mt_cu_index cus;
	bool sym_indexed;           /* syms was built */
	struct mt_sym_index syms;
};

static struct module_data *module_data(Dwfl_Module *mod)
{
	void **userdata;

	if (!dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL,
			      NULL))
		return NULL;
	return *userdata;
}

/* Report M's file at its ELF addresses; returns -ENOMEM only. */
static int report_file(Dwfl *dwfl, const struct mt_module *m)
{
	if (!m->path)
		return 0;
	struct module_data *data = calloc(1, sizeof(*data));

	if (!data)
		return -ENOMEM;
	/* libdwfl owns (and closes) the descriptor of a reported module. */
	int fd = m->fd >= 0 ? dup(m->fd) : -1;

	/*
	 * add_p_vaddr=true with BASE 0: the module lies at its ELF virtual
	 * addresses (a load bias of 0), whatever process maps it where.
	 */
	Dwfl_Module *mod = dwfl_report_elf(dwfl, mt_path_basename(m->path),
					   m->path, fd, 0, true);
	void **userdata;

	if (!mod || !dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL,
				      NULL, NULL)) {
		if (!mod && fd >= 0)
			close(fd);
		free(data);
		return 0;
	}
	*userdata = data;
	return 0;
}

static void free_data(void **userdata)
{
	struct module_data *data = *userdata;

	if (data) {
		mt_cu_index_free(&data->cus);
		mt_sym_index_free(&data->syms);
		free(data);
		*userdata = NULL;
	}
}

/* dwfl_getmodules callback: free the data of every module. */
static int free_module(Dwfl_Module *mod, void **userdata, const char *name,
		       Dwarf_Addr start, void *arg)
{
	(void)mod, (void)name, (void)start, (void)arg;
	free_data(userdata);
	return DWARF_CB_OK;
}

/*
 * dwfl_report_end callback for a module dropped from the session (libdwfl
 * drops the first of two conflicting modules): its second argument is the
 * address of the module's user data.
 */
static int removed_module(Dwfl_Module *mod, void *userdata, const char *name,
			  Dwarf_Addr start, void *arg)
{
	(void)mod, (void)name, (void)start, (void)arg;
	free_data(userdata);
	return 0;
}

void mt_file_dwfl_close(Dwfl *dwfl)
{
	if (!dwfl)
		return;
	dwfl_getmodules(dwfl, free_module, NULL, 0);
	dwfl_end(dwfl);
}

Dwfl *mt_file_dwfl_open(const struct mt_module *m)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	int err;

	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	err = report_file(dwfl, m);
	dwfl_report_end(dwfl, removed_module, NULL);
	if (err) {
		mt_file_dwfl_close(dwfl);
		return NULL;
	}
	return dwfl;
}

int mt_file_dwfl_addrdie(Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Die **cudie,
			 Dwarf_Addr *bias)
{
	struct module_data *data;
	Dwarf *dw;

	/*
	 * libdwfl looks units up in .debug_aranges, taking each entry to reach
	 * up to the next one: an address of a unit missing there (clang's)
	 * comes back as no unit, or as the unit before it.
	 */
	*cudie = dwfl_module_addrdie(mod, pc, bias);
	if (*cudie && dwarf_haspc(*cudie, pc - *bias) > 0)
		return 0;
	/* Look in the units' own ranges instead. */
	*cudie = NULL;
	data = module_data(mod);
	dw = dwfl_module_getdwarf(mod, bias);
	if (!data || !dw)
		return 0;
	if (!data->indexed) {
		int err = mt_cu_index_build(&data->cus, dw);

		if (err)
			return err;
		data->indexed = true;
	}
	*cudie = mt_cu_index_find(&data->cus, pc - *bias);
	return 0;
}

int mt_file_dwfl_symbols(Dwfl_Module *mod, const struct mt_sym_index **syms)
{
	struct module_data *data = module_data(mod);

	*syms = NULL;
	if (!data)
		return 0;
	if (!data->sym_indexed) {
		int err = mt_sym_index_build(&data->syms, mod);

		if (err)
			return err;
		data->sym_indexed = true;
	}
	*syms = &data->syms;
	return 0;
}
