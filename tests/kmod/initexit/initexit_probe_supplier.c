// SPDX-License-Identifier: GPL-2.0
/*
 * The supplier initexit_probe_consumer waits for: a platform device and
 * driver whose probe binds synchronously in this module's init (the bind
 * triggers the deferred probe work), and a second device whose driver
 * asks for asynchronous probing, so that its probe runs in an async
 * worker rather than in the init.  Without pairs: built for the stock
 * kernel too.
 */
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/init.h>
#include <linux/module.h>
#include <linux/platform_device.h>

static struct platform_device *supplier_pdev, *async_pdev;

static int supplier_probe(struct platform_device *pdev)
{
	msleep(10);
	return 0;
}

static int async_probe(struct platform_device *pdev)
{
	msleep(20);
	return 0;
}

static struct platform_driver supplier_driver = {
	.probe = supplier_probe,
	.driver = {
		.name = "initexit-probe-supplier",
	},
};

static struct platform_driver async_driver = {
	.probe = async_probe,
	.driver = {
		.name = "initexit-probe-async",
		.probe_type = PROBE_PREFER_ASYNCHRONOUS,
	},
};

static int __init supplier_init(void)
{
	int ret;

	async_pdev = platform_device_register_simple("initexit-probe-async",
						     PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(async_pdev))
		return PTR_ERR(async_pdev);
	ret = platform_driver_register(&async_driver);
	if (ret)
		goto err_async_pdev;
	supplier_pdev = platform_device_register_simple("initexit-probe-supplier",
							PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(supplier_pdev)) {
		ret = PTR_ERR(supplier_pdev);
		goto err_async_driver;
	}
	ret = platform_driver_register(&supplier_driver);
	if (ret)
		goto err_supplier_pdev;
	return 0;

err_supplier_pdev:
	platform_device_unregister(supplier_pdev);
err_async_driver:
	platform_driver_unregister(&async_driver);
err_async_pdev:
	platform_device_unregister(async_pdev);
	return ret;
}

static void __exit supplier_exit(void)
{
	platform_driver_unregister(&supplier_driver);
	platform_device_unregister(supplier_pdev);
	platform_driver_unregister(&async_driver);
	platform_device_unregister(async_pdev);
}

module_init(supplier_init);
module_exit(supplier_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("initexit test: the supplier of initexit_probe_consumer");
