/* SPDX-License-Identifier: MIT */
/*
 * test_module_id.c: the modules the loader captures for the report carry
 * their file's identity (struct mt_module's dev and ino, stat(2)'s of the
 * mapped file), whether read from /proc/PID/maps (mapping_capture.c) or
 * from the registry's image (images.c), with or without a descriptor kept:
 * symbolisation keys its files by them (src/report/symbols/file_addrs.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "images.h"
#include "mapping_capture.h"

/* Every module of P has the identity stat gives its path. */
static void assert_ids(const struct mt_process *p)
{
	assert_true(p->nmods >= 3);
	for (size_t i = 0; i < p->nmods; i++) {
		struct stat st;

		assert_int_equal(stat(p->mods[i].path, &st), 0);
		assert_int_equal(p->mods[i].dev, (uint64_t)st.st_dev);
		assert_int_equal(p->mods[i].ino, (uint64_t)st.st_ino);
	}
}

static void test_from_maps(void **state)
{
	for (int keep = 0; keep < 2; keep++) {
		struct mt_process p = { .pid = (uint32_t)getpid() };

		(void)state;
		assert_true(mt_modules_refresh(&p, keep) >= 3);
		assert_ids(&p);
		mt_process_free_mods(&p);
	}
}

static void test_from_image(void **state)
{
	struct mt_images r;
	const struct mt_image *img;

	(void)state;
	memset(&r, 0, sizeof(r));
	img = mt_images_read(&r, getpid(), NULL, 0);
	assert_non_null(img);
	for (int keep = 0; keep < 2; keep++) {
		struct mt_process p = { .pid = (uint32_t)getpid() };

		assert_true(mt_modules_from_image(&p, img, keep) >= 3);
		assert_ids(&p);
		mt_process_free_mods(&p);
	}
	mt_images_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_maps),
		cmocka_unit_test(test_from_image),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
