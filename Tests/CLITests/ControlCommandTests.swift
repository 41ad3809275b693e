import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("framekit --control, devices --controls and the preview's controls")
struct ControlCommandTests {
    @Test("devices --controls lists the virtual camera's controls as v4l2-ctl does, and as JSON")
    func listing() throws {
        let text = try BinaryRunner.run("framekit", ["devices", "--controls"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("brightness 0x980900 (int) : min=0 max=255 step=1 default=128 value=128 flags=slider"))
        #expect(text.stdout.contains("auto_exposure 0x9a0901 (menu) : min=0 max=1 default=0 value=0\n"))
        #expect(text.stdout.contains("\t1: Manual Mode"))
        let json = try BinaryRunner.run("framekit", ["devices", "--controls", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let devices = try #require(object["devices"] as? [[String: Any]])
        let virtual = try #require(devices.first { $0["id"] as? String == "virtual" })
        let controls = try #require(virtual["controls"] as? [[String: Any]])
        #expect(controls.compactMap { $0["key"] as? String }.contains("white_balance_temperature"))
        let exposure = try #require(controls.first { $0["key"] as? String == "auto_exposure" })
        #expect((exposure["menu"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Auto Mode", "Manual Mode"])
        // Without --controls, none are listed.
        let plain = try BinaryRunner.run("framekit", ["devices", "--json"])
        #expect(!plain.stdout.contains("\"controls\""))
    }

    @Test("--control sets controls before capture (a brighter photo); bad names and values are usage errors")
    func settingAtStart() throws {
        let folder = Fixtures.temporaryFolder()
        func meanLuma(_ controls: [String]) throws -> Double {
            let file = folder.appendingPathComponent("shot-\(UUID().uuidString).jpg")
            let run = try BinaryRunner.run(
                "framekit", ["photo", "--output", file.path, "--device", "virtual", "--preset", "vga640x480"] + controls)
            #expect(run.status == 0, "\(run.stderr)")
            let gray = try JPEG.decode(ImageFile.read(file), to: .gray8)
            return gray.withUnsafeBytes(ofPlane: 0) { b, p in
                var sum = 0
                for y in 0..<gray.height { for x in 0..<gray.width { sum += Int(b[y * p.bytesPerRow + x]) } }
                return Double(sum) / Double(gray.width * gray.height)
            }
        }
        let plain = try meanLuma([])
        let bright = try meanLuma(["--control", "brightness=178"])
        #expect(bright - plain > 35, "mean luma \(plain) → \(bright)")
        let dark = try meanLuma(["--control", "auto_exposure=manual_mode", "--control", "exposure_time_absolute=40"])
        #expect(plain - dark > 40, "mean luma \(plain) → \(dark) with a short exposure")
        for (arguments, message) in [
            (["--control", "iris=3"], "has no control 'iris'"), (["--control", "brightness=300"], "0…255"),
            (["--control", "brightness"], "NAME=VALUE"), (["--control", "auto_exposure=sport"], "auto_mode, manual_mode"),
            (["--control", "gain=abc"], "not a value of gain")
        ] {
            let run = try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--frames", "1"] + arguments)
            #expect(run.status == 64 && run.stderr.contains(message), "\(arguments): \(run.status) \(run.stderr)")
        }
    }

    @Test("the preview page lists the controls in a real browser, and POST /control changes them from loopback only")
    func preview() throws {
        let remoteAddress = RawHTTP.nonLoopbackAddress()
        let preview = try RunningPreview.start(
            ["preview", "--port", "0", "--duration", "30", "--device", "virtual", "--host", "0.0.0.0"]
                + (remoteAddress.map { ["--allow-host", $0] } ?? []))
        defer { preview.stop() }
        let port = preview.port
        func controls() throws -> [String: [String: Any]] {
            let r = try RawHTTP.request(port: port, "GET", "/controls.json")
            let list = try #require(try JSONSerialization.jsonObject(with: Data(r.body)) as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: list.map { ($0["key"] as? String ?? "", $0) })
        }
        #expect(try controls()["brightness"]?["value"] as? Int == 128)
        let set = try RawHTTP.request(port: port, "POST", "/control/brightness/200")
        #expect(set.status == 200 && String(decoding: set.body, as: UTF8.self).contains("\"value\": 200"))
        #expect(try controls()["brightness"]?["value"] as? Int == 200)
        #expect(try RawHTTP.request(port: port, "POST", "/control/brightness/999").status == 422)
        #expect(try RawHTTP.request(port: port, "POST", "/control/iris/1").status == 422)
        #expect(try RawHTTP.request(port: port, "GET", "/control/brightness/100").status == 405)
        #expect(try RawHTTP.request(port: port, "POST", "/control/brightness/../x").status == 404)
        let foreign = try RawHTTP.request(
            port: port, "POST", "/control/brightness/10", headers: "Host: 127.0.0.1\r\nOrigin: http://attacker.example\r\n")
        #expect(foreign.status == 403)
        // From another machine's side (this machine's own non-loopback address): refused.
        if let address = remoteAddress {
            let remote = try RawHTTP.request(
                port: port, "POST", "/control/brightness/10", headers: "Host: \(address)\r\n", address: address)
            #expect(remote.status == 403 && String(decoding: remote.body, as: UTF8.self).contains("this machine only"))
        }
        #expect(try controls()["brightness"]?["value"] as? Int == 200)
        // A real browser runs the page's script: it builds an input per settable control.
        let chromium = "/usr/bin/chromium"
        try #require(FileManager.default.isExecutableFile(atPath: chromium), "Debian's chromium is needed (scripts/bootstrap installs it)")
        let dom = try BinaryRunner.runTool(
            chromium,
            ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=3000", "--dump-dom", "http://127.0.0.1:\(port)/"])
        #expect(dom.stdout.contains("id=\"control-brightness\""), "\(dom.stdout.suffix(600))")
        #expect(dom.stdout.contains("id=\"control-auto_exposure\"") && dom.stdout.contains("Manual Mode"))
    }
}
