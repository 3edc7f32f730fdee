// SPDX-License-Identifier: GPL-2.0
/*
 * A platform device and its driver whose probe defers (dev_err_probe()
 * with -EPROBE_DEFER, which records the reason for
 * /sys/kernel/debug/devices_deferred and the "deferred probe pending"
 * warning) until initexit_probe_supplier's device is bound; that bind
 * triggers the deferred probe work, which probes this device again.
 * The analysis's probe fixtures are captured with it
 * (analysis/tests/fixtures/probes/).  Without pairs: built for the
 * stock kernel too.
 */
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/platform_device.h>

#define SUPPLIER_NAME "initexit-probe-supplier"

static struct platform_device *consumer_pdev;

static bool supplier_bound(void)
{
	struct device *dev;
	bool bound;

	dev = bus_find_device_by_name(&platform_bus_type, NULL, SUPPLIER_NAME);
	if (!dev)
		return false;
	bound = device_is_bound(dev);
	put_device(dev);
	return bound;
}

static int consumer_probe(struct platform_device *pdev)
{
	if (!supplier_bound())
		return dev_err_probe(&pdev->dev, -EPROBE_DEFER,
				     "waiting for %s\n", SUPPLIER_NAME);
	/* Long enough to stand out in the timeline. */
	msleep(5);
	dev_info(&pdev->dev, "bound after %s\n", SUPPLIER_NAME);
	return 0;
}

static struct platform_driver consumer_driver = {
	.probe = consumer_probe,
	.driver = {
		.name = "initexit-probe-consumer",
	},
};

static int __init consumer_init(void)
{
	int ret;

	ret = platform_driver_register(&consumer_driver);
	if (ret)
		return ret;
	consumer_pdev = platform_device_register_simple("initexit-probe-consumer",
							PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(consumer_pdev)) {
		platform_driver_unregister(&consumer_driver);
		return PTR_ERR(consumer_pdev);
	}
	return 0;
}

static void __exit consumer_exit(void)
{
	platform_device_unregister(consumer_pdev);
	platform_driver_unregister(&consumer_driver);
}

module_init(consumer_init);
module_exit(consumer_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("initexit test: a probe that defers until its supplier binds");
